"""Provenance of outside values and the Hooks interface (no torch: a small fake Module stands in)."""

import pytest

from thunder.interpreter import (
    Hooks,
    InterpreterError,
    Provenance,
    WrappedValue,
    call_wrapped,
    current_source_location,
    interpret,
    interpreted_frames,
)

# ----- a torch.nn.Module look-alike ---------------------------------------------------------------


class Param:
    """Stands in for a tensor / nn.Parameter."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Param({self.name})"


class Module:
    def __init__(self):
        self.__dict__["_parameters"] = {}
        self.__dict__["_modules"] = {}

    def __getattr__(self, name):  # like torch.nn.Module.__getattr__
        if "_parameters" in self.__dict__:
            params = self.__dict__["_parameters"]
            if name in params:
                return params[name]
        if "_modules" in self.__dict__:
            modules = self.__dict__["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if isinstance(value, Param):
            self.__dict__["_parameters"][name] = value
        elif isinstance(value, Module):
            self.__dict__["_modules"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class ModuleList(Module):
    def __init__(self, modules):
        super().__init__()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __getitem__(self, i):
        return self._modules[str(i)]

    def __iter__(self):  # like torch.nn.ModuleList.__iter__
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)


class Linear(Module):
    def __init__(self, name):
        super().__init__()
        self.weight = Param(name + ".weight")
        self.scale = 2

    def forward(self, x):
        return x + [self.weight.name] * self.scale


class Net(Module):
    def __init__(self):
        super().__init__()
        self.layers = ModuleList([Linear("l0"), Linear("l1")])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Recorder(Hooks):
    def __init__(self):
        self.inputs = []

    def on_input(self, value, provenance):
        self.inputs.append((provenance, value))
        return value

    def provenances_of(self, obj):
        return [p for p, v in self.inputs if v is obj]


def _only_provenance_of(rec, obj):
    provs = set(rec.provenances_of(obj))
    assert len(provs) == 1, provs
    return provs.pop()


# ----- module parameters ----------------------------------------------------------------------------


def test_indexed_layer_weight_path_replays():
    net = Net()

    def f(m):
        return m.layers[1].weight

    rec = Recorder()
    args = (net,)
    w = interpret(f, args, {}, hooks=rec)
    assert w is net.layers[1].weight
    prov = _only_provenance_of(rec, w)
    assert prov.path() == (
        ("arg", 0), ("attr", "__dict__"), ("item", "_modules"), ("item", "layers"),
        ("attr", "_modules"), ("item", "1"),
        ("attr", "__dict__"), ("item", "_parameters"), ("item", "weight"),
    )
    assert prov.is_outside
    assert prov.replay(f, args, {}) is w


def test_iterating_module_list_reaches_weights():
    net = Net()

    def f(m):
        return [layer.weight for layer in m.layers]

    rec = Recorder()
    args = (net,)
    weights = interpret(f, args, {}, hooks=rec)
    assert weights == [net.layers[0].weight, net.layers[1].weight]
    for w in weights:
        prov = _only_provenance_of(rec, w)
        assert prov.path()[0] == ("arg", 0)
        assert ("item", "_parameters") in prov.path()
        assert prov.replay(f, args, {}) is w


def test_callable_module_forward_and_self_provenance():
    net = Net()
    rec = Recorder()
    assert interpret(net, ([],), {}, hooks=rec) == net([])
    for layer in net.layers:
        prov = _only_provenance_of(rec, layer.weight)
        assert prov.path()[0] == ("fn", None)
        assert prov.replay(net, ([],), {}) is layer.weight
    # plain attributes read from outside objects are inputs too
    scale_provs = [p for p, v in rec.inputs if p.path()[-1] == ("attr", "scale")]
    assert scale_provs and all(p.replay(net, ([],), {}) == 2 for p in scale_provs)


def test_getattr_builtin_and_dict_items_keep_provenance():
    net = Net()

    def f(m):
        out = []
        for key, module in getattr(m, "layers")._modules.items():
            out.append((key, module.__dict__.get("_parameters")["weight"]))
        return out

    rec = Recorder()
    args = (net,)
    result = interpret(f, args, {}, hooks=rec)
    for key, w in result:
        prov = _only_provenance_of(rec, w)
        assert prov.replay(f, args, {}) is w


class IterationRecorder(Recorder):
    def __init__(self):
        super().__init__()
        self.lengths = []  # containers whose number of entries the program relied on

    def on_length(self, wcontainer):
        self.lengths.append(wcontainer.provenance)


@pytest.mark.parametrize("consume", [
    lambda d: [k for k in d], lambda d: list(d), lambda d: tuple(d.keys()), lambda d: sorted(d, key=lambda k: -d[k]),
    lambda d: [k for k, _ in d.items()], lambda d: list(dict(d)),
], ids=["for", "list", "tuple-keys", "sorted-key", "items", "dict"])
def test_iterating_an_outside_dict_reaches_keys_by_position(consume):
    d = {"x": 1, "y": 2}
    rec = IterationRecorder()
    result = interpret(consume, (d,), {}, hooks=rec)
    assert result == consume(d)
    keys = [p for p, _ in rec.inputs if p.kind == "key"]
    assert [p.key for p in keys] == [0, 1] and all(p.parent == Provenance.arg(0) for p in keys)
    assert [p.replay(consume, (d,), {}) for p in keys] == ["x", "y"]  # tuple(d)[i]
    assert rec.lengths == [Provenance.arg(0)]  # the loop ran to the end: the length matters


def test_list_of_an_interpreted_iterator_keeps_element_provenance():
    net = Net()

    def f(m):
        return list(m.layers)[-1].weight, [p for p in {net.layers[0].weight}]

    rec = IterationRecorder()
    w, _ = interpret(f, (net,), {}, hooks=rec)
    assert _only_provenance_of(rec, w).replay(f, (net,), {}) is w


def test_map_and_filter_call_their_function_through_the_interpreter():
    table = {"x": 10, "y": 20}

    def f(d):
        return list(map(lambda k: table[k] + d[k], filter(lambda k: d[k] > 1, d))), list(reversed(d))

    d = {"x": 1, "y": 2}
    rec = IterationRecorder()
    assert interpret(f, (d,), {}, hooks=rec) == f(d)
    read = {p.key for p, _ in rec.inputs if p.kind == "item"}
    assert {"x", "y"} <= read  # table[k] and d[k], read inside the callbacks, are inputs
    assert Provenance.arg(0) in rec.lengths


def test_breaking_out_of_dict_iteration_does_not_rely_on_its_length():
    d = {"x": 1, "y": 2}

    def f(d):
        for k in d:
            return k

    rec = IterationRecorder()
    assert interpret(f, (d,), {}, hooks=rec) == "x"
    assert rec.lengths == []


def test_enumerate_zip_and_unpacking_keep_provenance():
    a, b, c = Param("a"), Param("b"), Param("c")

    def f(xs, ys):
        first, *rest = xs
        pairs = [(i, x, y) for i, (x, y) in enumerate(zip(xs, ys))]
        return first, rest, pairs

    rec = Recorder()
    args = ([a, b], (c, a))
    interpret(f, args, {}, hooks=rec)
    assert Provenance.item(Provenance.arg(0), 0) in rec.provenances_of(a)
    assert Provenance.item(Provenance.arg(0), 1) in rec.provenances_of(b)
    assert Provenance.item(Provenance.arg(1), 0) in rec.provenances_of(c)
    for p, v in rec.inputs:
        assert p.replay(f, args, {}) is v


def test_packed_args_and_kwargs_keep_argument_provenance():
    x, y, z = Param("x"), Param("y"), Param("z")

    def f(first, *rest, **named):
        return rest[0], named["k"], rest

    rec = Recorder()
    got = interpret(f, (x, y), {"k": z}, hooks=rec)
    assert got[0] is y and got[1] is z
    assert rec.provenances_of(y) == [Provenance.arg(1)]
    assert rec.provenances_of(z) == [Provenance.kwarg("k")]


GLOBAL_PARAM = Param("global")


def test_globals_builtins_closures_defaults_replay():
    captured = Param("cell")
    default_p = Param("default")
    kw_default = Param("kwdefault")

    def f(x, d=default_p, *, k=kw_default):
        return GLOBAL_PARAM, len, captured, d, k

    rec = Recorder()
    interpret(f, (1,), {}, hooks=rec)
    kinds = {}
    for p, v in rec.inputs:
        kinds[p.kind] = p
        assert p.replay(f, (1,), {}) is v
    assert kinds["global"].root is f.__globals__ and kinds["global"].key == "GLOBAL_PARAM"
    assert kinds["builtin"].key == "len"
    assert kinds["closure_cell"].root is f.__closure__[0]
    assert kinds["closure_cell"].key[2] == "captured"
    assert {p.key for p, _ in rec.inputs if p.kind == "default"} == {"d", "k"}
    assert rec.provenances_of(default_p)[0].root is f


def test_cells_created_inside_are_not_inputs():
    def f(x):
        local = Param("local")

        def inner():
            return local

        return inner()

    rec = Recorder()
    interpret(f, (1,), {}, hooks=rec)
    assert not any(p.kind == "closure_cell" for p, _ in rec.inputs)


def test_on_input_replacement_is_computed_afterwards():
    class Proxying(Recorder):
        def on_input(self, value, provenance):
            super().on_input(value, provenance)
            if isinstance(value, Param):
                return f"proxy<{value.name}>"
            return value

    def f(m, p):
        return m.layers[0].weight, p.upper()

    rec = Proxying()
    result = interpret(f, (Net(), Param("p")), {}, hooks=rec)
    assert result == ("proxy<l0.weight>", "PROXY<P>")
    # attributes of the replacement string (p.upper) are not inputs
    assert not any(p.path()[-1] == ("attr", "upper") for p, _ in rec.inputs)


def test_provenance_value_semantics():
    a = Provenance.attr(Provenance.arg(0), "w")
    b = Provenance.attr(Provenance.arg(0), "w")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a.is_outside and not Provenance.computed().is_outside
    assert not Provenance.item(Provenance.computed(), 0).is_outside
    assert a.path() == (("arg", 0), ("attr", "w"))
    assert a.to_source() == "args[0].w"
    with pytest.raises(AttributeError):
        a.kind = "x"
    w = WrappedValue(1, a)
    assert w.value == 1 and w.provenance is a


# ----- hooks ----------------------------------------------------------------------------------------


def _helper(a, b):
    return a + b


def test_lookaside_replaces_calls_with_unwrapped_args():
    seen = []

    class H(Hooks):
        def lookaside(self, fn):
            if fn is _helper:
                def replacement(*args, **kwargs):
                    seen.append((args, kwargs))
                    return "replaced"

                return replacement
            return None

    def f(x):
        return [_helper(x, 1), _helper(a=x, b=2)]

    assert interpret(f, (5,), {}, hooks=H()) == ["replaced", "replaced"]
    assert seen == [((5, 1), {}), ((), {"a": 5, "b": 2})]


def test_wrapped_lookaside_keeps_self_provenance():
    class H(Recorder):
        def wrapped_lookaside(self, fn):
            if fn is Module.__call__:
                def module_call(self_w, *args, **kwargs):
                    assert isinstance(self_w, WrappedValue)
                    return call_wrapped(type(self_w.value).forward, self_w, *args, **kwargs)

                return module_call
            return None

    net = Net()

    def f(m, x):
        return m(x)

    rec = H()
    assert interpret(f, (net, []), {}, hooks=rec) == net([])
    for layer in net.layers:
        assert _only_provenance_of(rec, layer.weight).replay(f, (net, []), {}) is layer.weight


def test_should_interpret_false_runs_natively():
    calls = []

    def inner(x):
        return _helper(x, x)

    class H(Hooks):
        def should_interpret(self, fn):
            return fn is not inner

        def lookaside(self, fn):
            if fn is _helper:
                calls.append(fn)
            return None

    def f(x):
        return inner(x) + _helper(x, 0)

    assert interpret(f, (3,), {}, hooks=H()) == 9
    assert len(calls) == 1  # only the call made by interpreted code


COUNTER = 0


def test_on_store_for_outside_state_only():
    stores = []

    class H(Hooks):
        def on_store(self, kind, target, key, value):
            stores.append((kind, None if target is None else target.provenance.kind, key,
                           None if value is None else value.value))

    box = [0]

    def f(obj, d):
        global COUNTER
        nonlocal_target = box  # noqa: F841
        COUNTER = 1
        obj.attr = 2
        d["k"] = 3
        del d["old"]
        local = Param("local")
        local.name = "changed"  # created inside: just performed
        fresh = {}
        fresh["x"] = 1
        return local.name, fresh

    class Obj:
        pass

    obj, d = Obj(), {"old": 1}
    assert interpret(f, (obj, d), {}, hooks=H()) == ("changed", {"x": 1})
    assert ("global", None, "COUNTER", 1) in stores
    assert ("attr", "arg", "attr", 2) in stores
    assert ("item", "arg", "k", 3) in stores
    assert ("delete_item", "arg", "old", None) in stores
    assert COUNTER == 0 and not hasattr(obj, "attr") and d == {"old": 1}


def test_on_store_for_closure_cells_and_default_performs():
    def make():
        count = 0

        def bump():
            nonlocal count
            count += 1
            return count

        return bump

    bump = make()
    stores = []

    class H(Hooks):
        def on_store(self, kind, target, key, value):
            stores.append((kind, key, target.value is bump.__closure__[0]))
            super().on_store(kind, target, key, value)  # default: perform the write

    assert interpret(bump, (), {}, hooks=H()) == 1
    assert stores == [("cell", "count", True)]
    assert bump() == 2  # the write really happened


def test_current_source_location_inside_lookaside():
    locations = []

    class H(Hooks):
        def lookaside(self, fn):
            if fn is _helper:
                def replacement(*args):
                    locations.append((current_source_location(), interpreted_frames()))
                    return 0

                return replacement
            return None

    def f(x):
        y = x * 2
        return _helper(y, 1)  # the line we expect

    interpret(f, (1,), {}, hooks=H())
    (loc, frames), = locations
    assert loc.function.endswith("f")
    assert loc.source == "return _helper(y, 1)  # the line we expect"
    assert loc.lineno == f.__code__.co_firstlineno + 2
    assert frames[-1] == loc
    assert current_source_location() is None and interpreted_frames() == []


def test_exception_escapes_as_same_object():
    err = ValueError("same object")

    def f():
        raise err

    with pytest.raises(ValueError) as info:
        interpret(f, (), {})
    assert info.value is err


def test_async_function_raises_interpreter_error():
    async def coro():
        return 1

    def f():
        return coro()

    with pytest.raises(InterpreterError) as info:
        interpret(f, (), {})
    message = str(info.value)
    assert "async" in message and "coro" in message
    assert "return coro()" in message  # the user's line


def test_interpreter_error_not_catchable_by_user_code():
    async def coro():
        return 1

    def f():
        try:
            return coro()
        except Exception:
            return "swallowed"

    with pytest.raises(InterpreterError):
        interpret(f, (), {})


def test_call_wrapped_outside_interpretation_errors():
    with pytest.raises(InterpreterError):
        call_wrapped(len, [1])


def test_interpret_bound_method_partial_and_class():
    import functools

    class Acc:
        def __init__(self, base):
            self.base = base

        def add(self, x):
            return self.base + x

    acc = Acc(10)
    rec = Recorder()
    assert interpret(acc.add, (5,), {}, hooks=rec) == 15
    base_prov = rec.provenances_of(10)[0]
    assert base_prov.path() == (("fn", None), ("attr", "__self__"), ("attr", "base"))
    assert base_prov.replay(acc.add, (5,), {}) == 10
    assert interpret(functools.partial(_helper, 1), (2,), {}) == 3
    assert interpret(Acc, (3,), {}).base == 3


def test_in_place_operators_on_builtins_are_method_calls_the_hooks_see():
    # ``lst += more`` mutates lst: hooks see list.__iadd__ like any method call (a jit records it)
    seen = []

    class H(Hooks):
        def lookaside(self, fn):
            if getattr(fn, "__name__", None) in ("__iadd__", "__ior__", "__imul__"):
                def call(*args):
                    seen.append((type(fn.__self__).__name__, fn.__name__, args))
                    return fn(*args)

                return call
            return None

    def f(lst, s, n):
        lst += [n]
        lst *= 2
        s |= {n}
        n += 1  # ints have no __iadd__: native, no call
        t = (1,)
        t += (2,)  # tuples neither
        return lst, s, n, t

    lst, s = [0], {5}
    assert interpret(f, (lst, s, 3), {}, hooks=H()) == ([0, 3, 0, 3], {3, 5}, 4, (1, 2))
    assert lst == [0, 3, 0, 3] and s == {3, 5}
    assert seen == [("list", "__iadd__", ([3],)), ("list", "__imul__", (2,)), ("set", "__ior__", ({3},))]


def test_missing_attributes_of_outside_objects_are_reported():
    missing = []

    class H(Hooks):
        def on_missing_attribute(self, wobj, name):
            missing.append((wobj.provenance.to_source(), name))

    class Obj:
        pass

    def f(o):
        a = getattr(o, "scale", 1)
        b = hasattr(o, "shift")
        try:
            o.bias
        except AttributeError:
            pass
        local = Obj()
        c = getattr(local, "scale", 2)  # not from outside: nothing to report
        return a, b, c

    assert interpret(f, (Obj(),), {}, hooks=H()) == (1, False, 2)
    assert [name for _, name in missing] == ["scale", "shift", "bias"]
