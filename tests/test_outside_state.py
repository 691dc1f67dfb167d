"""Every kind of outside state a jitted function reads, changed by the caller between calls: the next call
must give eager's result (the new value flows in, or the prologue rejects the entry and the function is
retraced), under every caching option that checks.

Each row builds a function (or module), its arguments and a change of outside state that changes what
eager computes (asserted, so every row can fail), then compares jitted and eager before and after.
Calling twice with nothing changed must hit the cache, so the checks are not simply failing every time."""

from __future__ import annotations

import builtins
import dataclasses
import functools
import types

import pytest
import torch

import thunder

CACHES = ("constant values", "symbolic values")


@dataclasses.dataclass
class Row:
    fn: object  # a function or an nn.Module
    args: object  # () -> tuple of arguments (fresh each call)
    change: object  # () -> None, the caller changing outside state
    restore: object = None  # () -> None, undoes a change of process-wide state
    context: object = None  # () -> context manager every call runs in (grad mode, autocast)
    context_after: object = None  # the context after the change, when the change is the context itself


def _outcome(fn, args, context):
    """What a call gives: its result, or the exception it raised (type and message)."""
    try:
        with context() if context else _nothing():
            return "value", fn(*args)
    except Exception as e:  # noqa: BLE001 - an exception is an outcome to compare
        return "raise", (type(e), str(e))


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _same(a, b) -> bool:
    if type(a) is not type(b) and not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        return False
    if isinstance(a, torch.Tensor):
        return (a.shape == b.shape and a.dtype == b.dtype and a.requires_grad == b.requires_grad
                and a.is_inference() == b.is_inference() and torch.equal(a.detach(), b.detach()))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _assert_outcomes_equal(jitted, eager, when):
    kind_j, value_j = jitted
    kind_e, value_e = eager
    assert kind_j == kind_e, f"{when}: thunder gave {jitted}, eager {eager}"
    assert _same(value_j, value_e), f"{when}: thunder gave {value_j!r}, eager {value_e!r}"


def _make(source: str, **namespace):
    """Functions defined in a fresh module namespace (their globals), so rows can change them freely."""
    g = {"torch": torch, "__name__": "outside_state_row", **namespace}
    exec(compile(source, "<outside-state row>", "exec"), g)
    return g


ROWS: dict[str, callable] = {}


def row(fn):
    ROWS[fn.__name__] = fn
    return fn


def _x():
    return (torch.arange(4.0).reshape(2, 2),)


# ----- globals and builtins -------------------------------------------------------------------------------


@row
def global_rebound():
    g = _make("K = 2\ndef f(x):\n    return x * K")
    return Row(g["f"], _x, lambda: g.update(K=5))


@row
def global_deleted():
    g = _make("K = 2\ndef f(x):\n    return x * K")
    return Row(g["f"], _x, lambda: g.pop("K"))


@row
def global_added():
    g = _make("def f(x):\n    return x * (K if 'K' in globals() else 1)")
    return Row(g["f"], _x, lambda: g.update(K=4))


@row
def global_function_replaced():
    g = _make("def helper(x):\n    return x + 1\ndef f(x):\n    return helper(x)")
    return Row(g["f"], _x, lambda: g.update(helper=lambda x: x * 10))


@pytest.fixture(params=["len", "abs", "min", "max", "sum", "isinstance", "range"])
def builtin_name(request):
    return request.param


_SHADOW_SOURCES = {
    "len": ("def f(x):\n    return x * len([1, 2])", lambda s: 7),
    "abs": ("def f(x):\n    return x * abs(-3)", lambda v: 11),
    "min": ("def f(x):\n    return x * min(2, 5)", lambda *a: 9),
    "max": ("def f(x):\n    return x * max(2, 5)", lambda *a: 9),
    "sum": ("def f(x):\n    return x * sum([1, 2])", lambda s: 8),
    "isinstance": ("def f(x):\n    return x * 2 if isinstance(x, torch.Tensor) else x", lambda *a: False),
    "range": ("def f(x):\n    return x * len(list(range(3)))", lambda n: [0]),
}


@row
def builtin_shadowed_by_new_global():
    # ``len``, ``abs``, ... defined as a module global after the first call (the builtins test covers the others)
    g = _make(_SHADOW_SOURCES["len"][0])
    return Row(g["f"], _x, lambda: g.update(len=_SHADOW_SOURCES["len"][1]))


@row
def builtin_shadow_deleted():
    g = _make("len = lambda s: 5\ndef f(x):\n    return x * len([1, 2])")
    return Row(g["f"], _x, lambda: g.pop("len"))


@row
def builtin_shadow_rebound():
    g = _make("len = lambda s: 5\ndef f(x):\n    return x * len([1, 2])")
    return Row(g["f"], _x, lambda: g.update(len=lambda s: 6))


@row
def builtins_module_patched():
    original = builtins.abs
    g = _make("def f(x):\n    return x * abs(-3)")
    return Row(g["f"], _x, lambda: setattr(builtins, "abs", lambda v: 10),
               restore=lambda: setattr(builtins, "abs", original))


# ----- classes: methods, properties, class attributes ------------------------------------------------------


class _Base:
    scale = 2.0

    def apply(self, x):
        return x * 2

    @property
    def offset(self):
        return 1.0

    @classmethod
    def factor(cls):
        return 3.0

    @staticmethod
    def shift():
        return 4.0

    def __call__(self, x):
        return x - 1


def _fresh_classes():
    """A base and a derived class per row (rows patch them)."""

    class Base:
        scale = 2.0
        apply = _Base.apply
        offset = _Base.offset
        factor = _Base.__dict__["factor"]
        shift = _Base.__dict__["shift"]
        __call__ = _Base.__call__

    class Derived(Base):
        def run(self, x):
            return super().apply(x)

    return Base, Derived


@row
def method_replaced_on_class():
    Base, _ = _fresh_classes()
    return Row(lambda o, x: o.apply(x), lambda: (Base(), *_x()), lambda: setattr(Base, "apply", lambda s, x: x * 3))


@row
def method_replaced_on_base_class():
    Base, Derived = _fresh_classes()
    return Row(lambda o, x: o.apply(x), lambda: (Derived(), *_x()), lambda: setattr(Base, "apply", lambda s, x: x * 3))


@row
def method_overridden_in_subclass_later():
    Base, Derived = _fresh_classes()
    return Row(lambda o, x: o.apply(x), lambda: (Derived(), *_x()),
               lambda: setattr(Derived, "apply", lambda s, x: x - 7))


@row
def method_set_on_instance():
    Base, _ = _fresh_classes()
    o = Base()
    return Row(lambda o, x: o.apply(x), lambda: (o, *_x()), lambda: setattr(o, "apply", lambda x: x + 100))


@row
def bound_method_of_other_object_set_on_instance():
    Base, _ = _fresh_classes()
    o, other = Base(), Base()
    other.apply_impl = types.MethodType(lambda s, x: x * 9, other)
    o.apply = types.MethodType(lambda s, x: x * 5, o)
    return Row(lambda o, x: o.apply(x), lambda: (o, *_x()), lambda: setattr(o, "apply", other.apply_impl))


@row
def method_called_through_super_replaced_on_base():
    Base, Derived = _fresh_classes()
    return Row(lambda o, x: o.run(x), lambda: (Derived(), *_x()), lambda: setattr(Base, "apply", lambda s, x: x / 4))


@row
def property_replaced():
    Base, _ = _fresh_classes()
    return Row(lambda o, x: x + o.offset, lambda: (Base(), *_x()),
               lambda: setattr(Base, "offset", property(lambda s: -5.0)))


@row
def classmethod_replaced():
    Base, _ = _fresh_classes()
    return Row(lambda o, x: x * o.factor(), lambda: (Base(), *_x()),
               lambda: setattr(Base, "factor", classmethod(lambda cls: 7.0)))


@row
def staticmethod_replaced():
    Base, _ = _fresh_classes()
    return Row(lambda o, x: x * o.shift(), lambda: (Base(), *_x()),
               lambda: setattr(Base, "shift", staticmethod(lambda: -1.0)))


@row
def staticmethod_becomes_method():
    Base, _ = _fresh_classes()
    fn = Base.__dict__["shift"].__func__
    # the very same function, now bound: calling it with the instance fails as in eager
    return Row(lambda o, x: x * o.shift(), lambda: (Base(), *_x()), lambda: setattr(Base, "shift", fn))


@row
def dunder_call_replaced():
    Base, _ = _fresh_classes()
    return Row(lambda o, x: o(x), lambda: (Base(), *_x()), lambda: setattr(Base, "__call__", lambda s, x: x * 6))


@row
def dunder_add_replaced():
    class Vec:
        def __init__(self, t):
            self.t = t

        def __add__(self, other):
            return self.t + other

    v = Vec(torch.ones(2, 2))
    return Row(lambda v, x: v + x, lambda: (v, *_x()), lambda: setattr(Vec, "__add__", lambda s, o: s.t - o))


@row
def dunder_getitem_replaced():
    class Table:
        def __getitem__(self, k):
            return k * 2.0

    return Row(lambda t, x: x * t[3], lambda: (Table(), *_x()), lambda: setattr(Table, "__getitem__", lambda s, k: -k))


@row
def dunder_iter_replaced():
    class Steps:
        def __iter__(self):
            return iter([1.0, 2.0])

    return Row(lambda s, x: x * sum(v for v in s), lambda: (Steps(), *_x()),
               lambda: setattr(Steps, "__iter__", lambda s: iter([5.0])))


@row
def dunder_enter_replaced():
    class Ctx:
        def __enter__(self):
            return 2.0

        def __exit__(self, *exc):
            return False

    def f(c, x):
        with c as k:
            return x * k

    return Row(f, lambda: (Ctx(), *_x()), lambda: setattr(Ctx, "__enter__", lambda s: -1.0))


@row
def global_class_init_replaced():
    g = _make("class Helper:\n    def __init__(self):\n        self.k = 2.0\n"
              "def f(x):\n    return x * Helper().k")

    def init(self):
        self.k = 7.0

    return Row(g["f"], _x, lambda: setattr(g["Helper"], "__init__", init))


@row
def class_attribute_changed():
    Base, _ = _fresh_classes()
    return Row(lambda o, x: x * o.scale, lambda: (Base(), *_x()), lambda: setattr(Base, "scale", 5.0))


@row
def class_attribute_changed_on_base():
    Base, Derived = _fresh_classes()
    return Row(lambda o, x: x * o.scale, lambda: (Derived(), *_x()), lambda: setattr(Base, "scale", 5.0))


@row
def class_attribute_shadowed_by_instance():
    Base, _ = _fresh_classes()
    o = Base()
    return Row(lambda o, x: x * o.scale, lambda: (o, *_x()), lambda: setattr(o, "scale", -3.0))


@row
def class_of_instance_reassigned():
    Base, Derived = _fresh_classes()
    Derived.apply = lambda s, x: x + 0.5
    o = Base()
    return Row(lambda o, x: o.apply(x), lambda: (o, *_x()), lambda: setattr(o, "__class__", Derived))


@row
def global_class_method_replaced():
    # an instance made inside the function: the class (a global) is the outside state
    g = _make("class Helper:\n    def apply(self, x):\n        return x * 2\n"
              "def f(x):\n    return Helper().apply(x)")
    return Row(g["f"], _x, lambda: setattr(g["Helper"], "apply", lambda s, x: x * 3))


# ----- closures and defaults -------------------------------------------------------------------------------


@row
def closure_rebound_by_nonlocal():
    def make():
        k = 2

        def f(x):
            return x * k

        def set_k(v):
            nonlocal k
            k = v

        return f, set_k

    f, set_k = make()
    return Row(f, _x, lambda: set_k(-4))


@row
def closure_cell_emptied():
    def make():
        k = 2

        def f(x):
            return x * k

        def drop():
            nonlocal k
            del k

        return f, drop

    f, drop = make()
    return Row(f, _x, drop)


@row
def closure_function_rebound():
    def make():
        def helper(x):
            return x + 1

        def f(x):
            return helper(x)

        def set_helper(h):
            nonlocal helper
            helper = h

        return f, set_helper

    f, set_helper = make()
    return Row(f, _x, lambda: set_helper(lambda x: x * 8))


@row
def defaults_replaced():
    def f(x, k=2):
        return x * k

    return Row(f, _x, lambda: setattr(f, "__defaults__", (6,)))


@row
def kwdefaults_replaced():
    def f(x, *, k=2):
        return x * k

    return Row(f, _x, lambda: setattr(f, "__kwdefaults__", {"k": -1}))


@row
def function_code_replaced():
    def helper(x):
        return x + 1

    def f(x):
        return helper(x)

    return Row(f, _x, lambda: setattr(helper, "__code__", (lambda x: x * 3).__code__))


# ----- modules (Python modules and nn.Modules) -------------------------------------------------------------


@row
def module_attribute_via_import_alias():
    mod = types.ModuleType("row_settings")
    mod.FACTOR = 2.0
    g = _make("def f(x):\n    return x * m.FACTOR", m=mod)
    return Row(g["f"], _x, lambda: setattr(mod, "FACTOR", 3.5))


@row
def stdlib_module_attribute_via_import_alias():
    import math

    original = math.pi
    g = _make("import math as m\ndef f(x):\n    return x * m.pi")
    return Row(g["f"], _x, lambda: setattr(math, "pi", 3.0), restore=lambda: setattr(math, "pi", original))


@row
def module_function_replaced():
    mod = types.ModuleType("row_lib")
    mod.act = lambda x: x + 1
    g = _make("def f(x):\n    return m.act(x)", m=mod)
    return Row(g["f"], _x, lambda: setattr(mod, "act", lambda x: x * -1))


@row
def submodule_of_module_replaced():
    outer, inner = types.ModuleType("row_pkg"), types.ModuleType("row_pkg.sub")
    inner.K = 2.0
    outer.sub = inner
    other = types.ModuleType("row_pkg.other")
    other.K = 9.0
    g = _make("def f(x):\n    return x * pkg.sub.K", pkg=outer)
    return Row(g["f"], _x, lambda: setattr(outer, "sub", other))


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(2, 2)
        self.act = torch.nn.ReLU()
        self.scale = 2.0

    def forward(self, x):
        y = self.act(self.lin(x)) * self.scale
        return y * 2 if self.training else y


@row
def nn_submodule_replaced():
    m = _Net()
    return Row(m, _x, lambda: setattr(m, "act", torch.nn.Tanh()))


@row
def nn_submodule_attribute_changed():
    m = _Net()
    m.act = torch.nn.LeakyReLU(0.1)
    return Row(m, lambda: (-torch.ones(2, 2),), lambda: setattr(m.act, "negative_slope", 0.5))


@row
def nn_module_attribute_changed():
    m = _Net()
    return Row(m, _x, lambda: setattr(m, "scale", -1.0))


@row
def nn_forward_patched_on_instance():
    m = _Net()
    return Row(m, _x, lambda: setattr(m.lin, "forward", lambda x: x * 100))


@row
def nn_forward_patched_on_class():
    class MyLinear(torch.nn.Linear):
        pass

    m = _Net()
    torch.manual_seed(0)
    m.lin = MyLinear(2, 2)
    return Row(m, _x, lambda: setattr(MyLinear, "forward", lambda s, x: x - 3))


@row
def nn_parameter_replaced():
    m = _Net()
    return Row(m, _x, lambda: setattr(m.lin, "weight", torch.nn.Parameter(torch.ones(2, 2))))


@row
def nn_parameter_updated_in_place():
    m = _Net()

    def change():
        with torch.no_grad():
            m.lin.weight.mul_(-2)

    return Row(m, _x, change)


@row
def nn_forward_hook_registered():
    m = _Net()
    return Row(m, _x, lambda: m.lin.register_forward_hook(lambda mod, args, out: out + 10))


@row
def nn_forward_pre_hook_registered():
    m = _Net()
    return Row(m, _x, lambda: m.register_forward_pre_hook(lambda mod, args: (args[0] * 3,)))


@row
def transformer_encoder_layer_norm_eps_changed():
    # iterating a module's _modules by position reaches keys by index (list(d)[i]) in the prologue
    torch.manual_seed(0)
    m = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2)
    m.eval()
    return Row(m, lambda: (torch.randn(2, 3, 8, generator=torch.Generator().manual_seed(1)),),
               lambda: setattr(m.layers[1].norm2, "eps", 0.5))


@row
def train_to_eval():
    m = _Net()
    return Row(m, _x, m.eval)


@row
def eval_to_train():
    m = _Net().eval()
    return Row(m, _x, m.train)


@row
def batchnorm_train_to_eval():
    m = torch.nn.BatchNorm1d(2)
    return Row(m, lambda: (torch.tensor([[1.0, 2.0], [3.0, 5.0]]),), m.eval)


@row
def requires_grad_flipped_on_parameter():
    m = _Net()
    return Row(m, _x, lambda: m.lin.requires_grad_(False))


@row
def requires_grad_flipped_on_input():
    x = torch.ones(2, requires_grad=True)
    return Row(lambda x: x * 2, lambda: (x,), lambda: x.requires_grad_(False))


# ----- containers --------------------------------------------------------------------------------------------


@row
def global_list_of_numbers_mutated():
    g = _make("W = [1.0, 2.0]\ndef f(x):\n    return x * W[1] + len(W)")
    return Row(g["f"], _x, lambda: g["W"].append(5.0))


@row
def global_list_item_replaced():
    g = _make("W = [1.0, 2.0]\ndef f(x):\n    return x * sum(W)")
    return Row(g["f"], _x, lambda: g["W"].__setitem__(0, -9.0))


@row
def global_list_of_tensors_appended():
    g = _make("T = [torch.ones(2)]\ndef f(x):\n    return x + torch.stack(T).sum(0)")
    return Row(g["f"], _x, lambda: g["T"].append(torch.full((2,), 3.0)))


@row
def global_dict_value_changed():
    g = _make("D = {'a': 1.0}\ndef f(x):\n    return x * D['a']")
    return Row(g["f"], _x, lambda: g["D"].__setitem__("a", 4.0))


@row
def global_dict_key_added():
    g = _make("D = {'a': 1.0}\ndef f(x):\n    return x * D.get('b', 2.0)")
    return Row(g["f"], _x, lambda: g["D"].__setitem__("b", 4.0))


@row
def global_dict_key_removed():
    g = _make("D = {'a': 1.0, 'b': 3.0}\ndef f(x):\n    return x * len(D) + ('b' in D)")
    return Row(g["f"], _x, lambda: g["D"].pop("b"))


@row
def global_dict_splatted_key_added():
    g = _make("D = {'a': 1.0}\ndef g(x, a=0.0, b=0.0):\n    return x * a + b\n"
              "def f(x):\n    return g(x, **D)")
    return Row(g["f"], _x, lambda: g["D"].__setitem__("b", 4.0))


@row
def global_dict_iterated_key_added():
    g = _make("D = {'a': 1.0}\ndef f(x):\n    for k, v in D.items():\n        x = x + v\n    return x")
    return Row(g["f"], _x, lambda: g["D"].__setitem__("b", 4.0))


@row
def global_dict_missing_key_added():
    g = _make("D = {}\ndef f(x):\n    try:\n        return x * D['k']\n    except KeyError:\n        return x")
    return Row(g["f"], _x, lambda: g["D"].__setitem__("k", 3.0))


@row
def environment_variable_set():
    import os

    name = "THUNDER_OUTSIDE_STATE_ROW"
    os.environ.pop(name, None)
    return Row(lambda x: x * 2 if os.environ.get(name) == "1" else x, _x,
               lambda: os.environ.__setitem__(name, "1"), restore=lambda: os.environ.pop(name, None))


@pytest.fixture(params=["sorted(D)", "list(D)", "max(D.values())", "sum(D.values())", "tuple(D.items())",
                        "dict(D)"])
def whole_dict_expression(request):
    return request.param


@row
def global_set_iterated_member_added():
    g = _make("S = {1}\ndef f(x):\n    for s in S:\n        x = x + s\n    return x")
    return Row(g["f"], _x, lambda: g["S"].add(2))


@row
def object_attributes_through_vars():
    ns = types.SimpleNamespace(a=1)
    g = _make("def f(x):\n    return x * len(vars(o))", o=ns)
    return Row(g["f"], _x, lambda: setattr(ns, "b", 2))


@row
def class_attribute_through_type_of_instance():
    Base, _ = _fresh_classes()
    return Row(lambda o, x: x * type(o).scale, lambda: (Base(), *_x()), lambda: setattr(Base, "scale", 4.0))


@row
def global_set_member_added():
    g = _make("S = {'a'}\ndef f(x):\n    return x * 2 if 'b' in S else x")
    return Row(g["f"], _x, lambda: g["S"].add("b"))


@row
def global_list_of_objects_membership():
    a, b = object(), object()
    g = _make("SKIP = [A]\ndef f(o, x):\n    return x if o in SKIP else x * 2", A=a)
    return Row(g["f"], lambda: (a, *_x()), lambda: g["SKIP"].__setitem__(0, b))


@row
def membership_of_another_object_in_a_global_set():
    a, b = object(), object()
    holder = {"o": a}
    g = _make("SKIP = {A}\ndef f(o, x):\n    return x if o in SKIP else x * 2", A=a)
    return Row(g["f"], lambda: (holder["o"], *_x()), lambda: holder.update(o=b))


@row
def membership_of_another_object_in_a_global_list():
    a, b = object(), object()
    holder = {"o": a}
    g = _make("SKIP = [A]\ndef f(o, x):\n    return x if o in SKIP else x * 2", A=a)
    return Row(g["f"], lambda: (holder["o"], *_x()), lambda: holder.update(o=b))


@row
def global_list_became_tuple():
    g = _make("L = [object(), object()]\ndef f(x):\n    return x * 2 if isinstance(L, list) else x")
    return Row(g["f"], _x, lambda: g.update(L=tuple(g["L"])))


@row
def global_object_attribute_changed():
    ns = types.SimpleNamespace(scale=2.0)
    g = _make("def f(x):\n    return x * cfg.scale", cfg=ns)
    return Row(g["f"], _x, lambda: setattr(ns, "scale", 0.5))


@row
def global_object_attribute_deleted():
    ns = types.SimpleNamespace(scale=2.0)
    g = _make("def f(x):\n    return x * getattr(cfg, 'scale', 1.0)", cfg=ns)
    return Row(g["f"], _x, lambda: delattr(ns, "scale"))


@row
def global_object_attribute_added():
    ns = types.SimpleNamespace()
    g = _make("def f(x):\n    return x * 3 if hasattr(cfg, 'scale') else x", cfg=ns)
    return Row(g["f"], _x, lambda: setattr(ns, "scale", 1.0))


@row
def partial_keywords_changed():
    def scale(x, k):
        return x * k

    p = functools.partial(scale, k=2)
    return Row(lambda x: p(x), _x, lambda: p.keywords.__setitem__("k", 5))


# ----- torch's global state ------------------------------------------------------------------------------------


@row
def grad_mode_enable_to_no_grad():
    mode = {"ctx": torch.enable_grad}
    x = torch.ones(2, requires_grad=True)
    return Row(lambda x: x * 2, lambda: (x,), lambda: mode.update(ctx=torch.no_grad), context=lambda: mode["ctx"]())


@row
def grad_mode_no_grad_to_enable():
    mode = {"ctx": torch.no_grad}
    x = torch.ones(2, requires_grad=True)
    return Row(lambda x: x * 2, lambda: (x,), lambda: mode.update(ctx=torch.enable_grad), context=lambda: mode["ctx"]())


@row
def grad_mode_to_inference_mode():
    mode = {"ctx": torch.no_grad}
    return Row(lambda x: x * 2, _x, lambda: mode.update(ctx=torch.inference_mode), context=lambda: mode["ctx"]())


@row
def autocast_turned_on():
    mode = {"ctx": _nothing}
    return Row(lambda a, b: a @ b, lambda: (torch.ones(2, 2) / 3, torch.ones(2, 2) / 7),
               lambda: mode.update(ctx=lambda: torch.autocast("cpu", dtype=torch.bfloat16)),
               context=lambda: mode["ctx"]())


@row
def autocast_dtype_changed():
    mode = {"dtype": torch.bfloat16}
    return Row(lambda a, b: a @ b, lambda: (torch.ones(2, 2) / 3, torch.ones(2, 2) / 7),
               lambda: mode.update(dtype=torch.float16),
               context=lambda: torch.autocast("cpu", dtype=mode["dtype"]))


@row
def default_dtype_changed():
    original = torch.get_default_dtype()
    return Row(lambda x: x.sum() + torch.zeros(2), _x, lambda: torch.set_default_dtype(torch.float64),
               restore=lambda: torch.set_default_dtype(original))


@row
def default_dtype_changed_python_scalar_tensor():
    original = torch.get_default_dtype()
    return Row(lambda x: torch.tensor([1.5, 2.5]) * x.sum(), _x, lambda: torch.set_default_dtype(torch.float64),
               restore=lambda: torch.set_default_dtype(original))


@row
def default_dtype_changed_branch_on_dtype():
    original = torch.get_default_dtype()
    return Row(lambda x: x * 2 if torch.zeros(1).dtype == torch.float64 else x, _x,
               lambda: torch.set_default_dtype(torch.float64), restore=lambda: torch.set_default_dtype(original))


@row
def default_dtype_changed_int_true_divide():
    original = torch.get_default_dtype()
    return Row(lambda x: x.int() / 3, _x, lambda: torch.set_default_dtype(torch.float64),
               restore=lambda: torch.set_default_dtype(original))


@row
def default_dtype_changed_random():
    original = torch.get_default_dtype()

    def f(x):
        torch.manual_seed(0)
        return x + torch.rand(2)

    return Row(f, _x, lambda: torch.set_default_dtype(torch.float64), restore=lambda: torch.set_default_dtype(original))


@row
def default_dtype_queried_by_the_program():
    original = torch.get_default_dtype()
    return Row(lambda x: x.to(torch.get_default_dtype()), lambda: (torch.arange(4).reshape(2, 2),),
               lambda: torch.set_default_dtype(torch.float64), restore=lambda: torch.set_default_dtype(original))


@row
def deterministic_algorithms_switched():
    original = torch.are_deterministic_algorithms_enabled()
    return Row(lambda x: x * 2 if torch.are_deterministic_algorithms_enabled() else x, _x,
               lambda: torch.use_deterministic_algorithms(not original),
               restore=lambda: torch.use_deterministic_algorithms(original))


@row
def matmul_precision_switched():
    original = torch.get_float32_matmul_precision()
    return Row(lambda x: x * 2 if torch.get_float32_matmul_precision() == "high" else x, _x,
               lambda: torch.set_float32_matmul_precision("high" if original != "high" else "highest"),
               restore=lambda: torch.set_float32_matmul_precision(original))


# ----- the test -------------------------------------------------------------------------------------------------


def _run_row(r: Row, cache: str):
    jfn = thunder.jit(r.fn, cache=cache)
    stats = thunder.compile_stats(jfn)
    before = _outcome(r.fn, r.args(), r.context)
    _assert_outcomes_equal(_outcome(jfn, r.args(), r.context), before, "first call")
    _assert_outcomes_equal(_outcome(jfn, r.args(), r.context), before, "second call")
    assert stats.cache_hits >= 1, "a call with nothing changed must hit the cache"
    try:
        r.change()
        after = _outcome(r.fn, r.args(), r.context)
        assert not (before[0] == after[0] == "value" and _same(before[1], after[1])), (
            "the change must change what eager computes, or this row could not fail")
        _assert_outcomes_equal(_outcome(jfn, r.args(), r.context), after, "after the change")
        hits = stats.cache_hits
        _assert_outcomes_equal(_outcome(jfn, r.args(), r.context), after, "again after the change")
        if after[0] == "value":
            assert stats.cache_hits == hits + 1, "the new state must be cached too"
    finally:
        if r.restore is not None:
            r.restore()


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("name", list(ROWS))
def test_outside_state_change(name, cache):
    _run_row(ROWS[name](), cache)


@pytest.mark.parametrize("cache", CACHES)
def test_builtin_shadowed_by_global(builtin_name, cache):
    source, replacement = _SHADOW_SOURCES[builtin_name]
    g = _make(source)
    _run_row(Row(g["f"], _x, lambda: g.update({builtin_name: replacement})), cache)


def test_hooks_elsewhere_keep_the_cache():
    """A hook registered on a module the program does not call moves PyTorch's handle counter: the
    prologue then looks at the hook dicts of the modules it called, finds them empty, and hits."""
    m = _Net()
    jm = thunder.jit(m)
    x = _x()[0]
    jm(x)
    handle = torch.nn.Linear(1, 1).register_forward_hook(lambda *a: None)
    torch.testing.assert_close(jm(x), m(x))
    assert thunder.cache_misses(jm) == 1 and thunder.cache_hits(jm) == 1
    handle.remove()


def test_class_lookups_are_checked_once_per_class():
    """Methods of a class called on many instances: one check of the class's entry, one instance-dict check
    per instance (a patched instance attribute wins)."""
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * 2

    m = torch.nn.Sequential(*[Scale() for _ in range(4)])
    jm = thunder.jit(m)
    jm(_x()[0])
    prologue = str(thunder.last_prologue_traces(jm)[-1])
    assert prologue.count("Scale.forward") == 1, prologue
    assert prologue.count("'forward' in") == 5, prologue  # the Sequential and each Scale


@pytest.mark.parametrize("cache", CACHES)
def test_dict_read_whole_by_native_code(whole_dict_expression, cache):
    g = _make(f"D = {{'a': 1.0}}\ndef f(x):\n    return x * len(str({whole_dict_expression}))")
    _run_row(Row(g["f"], _x, lambda: g["D"].update(b=55.5)), cache)


@pytest.mark.parametrize("cache", CACHES)
def test_program_patching_a_class_itself(cache):
    """The program sets a class's method and calls it: what it finds there is its own write (replayed by the
    epilogue on every call), not an input to check."""
    Base, _ = _fresh_classes()

    def tripled(self, x):
        return x * 3

    def f(o, x):
        Base.apply = tripled
        return o.apply(x)

    jf = thunder.jit(f, cache=cache)
    o, x = Base(), _x()[0]
    torch.testing.assert_close(jf(o, x), x * 3)
    Base.apply = lambda s, x: x  # undone by the next call, as in eager
    torch.testing.assert_close(jf(o, x), f(o, x))
    assert thunder.cache_misses(jf) == 1


def test_reads_through_an_outside_weak_reference_follow_its_referent():
    import weakref

    class Box:
        pass

    box = Box()
    box.t = torch.ones(2)
    ref = weakref.ref(box)

    def f(x):
        return ref().t + x

    jf = thunder.jit(f)
    for v in (1.0, 2.0, 3.0):
        box.t = torch.full((2,), v)  # no stale value: the prologue calls the reference again
        torch.testing.assert_close(jf(torch.ones(2)), f(torch.ones(2)))
