"""Iterating containers from outside the jitted function: the keys, elements, length and order the program
saw are inputs the prologue re-reaches (``tuple(d)[i]``) and checks, so a container that changes between
calls gives eager's result, whether it is iterated by a ``for`` loop, a view, or a builtin that consumes it
(``list(d)``, ``sorted(d)``, ``sum(d.values())``, ``dict(d)``, ...)."""

import itertools
import warnings

import pytest
import torch
import torch.nn as nn

import thunder

D = {"a": 1.0, "b": 2.0}
S = {1, 2}
ML = nn.ModuleList([nn.Linear(2, 2)])
MD = nn.ModuleDict({"a": nn.Linear(2, 2)})


def _add():
    D["c"] = 5.0


def _pop():
    D.pop("a")


def _change():
    D["b"] = 7.0


def _reorder():
    D["b"] = D.pop("b")  # same keys and values, new order


DICT_CHANGES = (_add, _pop, _change, _reorder)
SET_CHANGES = (lambda: S.add(5), lambda: S.discard(1))

CASES = {
    "for k in d": (lambda x: sum((x * i * D[k] for i, k in enumerate(D)), x), DICT_CHANGES),
    "for v in d.values()": (lambda x: [x * i + v for i, v in enumerate(D.values())][-1], DICT_CHANGES),
    "for k, v in d.items()": (lambda x: [x * v + len(k) for k, v in D.items()][-1], DICT_CHANGES),
    "list(d)": (lambda x: x * len(list(D)) + D[list(D)[-1]], DICT_CHANGES),
    "list(d.keys())": (lambda x: x * len(list(D.keys())), DICT_CHANGES),
    "tuple(d.values())": (lambda x: x * tuple(D.values())[-1], DICT_CHANGES),
    "sorted(d, key=...)": (lambda x: x * sorted(D, key=lambda k: -D[k])[0].__len__() * D[sorted(D)[-1]], DICT_CHANGES),
    "sum(d.values())": (lambda x: x * sum(D.values()), DICT_CHANGES),
    "max(d.values())": (lambda x: x * max(D.values()), DICT_CHANGES),
    "any(genexpr)": (lambda x: x * (2 if any(v > 4 for v in D.values()) else 3), DICT_CHANGES),
    "dict(d)": (lambda x: x * dict(D)["b"] + len(dict(D)), DICT_CHANGES),
    "reversed(d)": (lambda x: x * D[next(reversed(D))] + len(list(reversed(D))), DICT_CHANGES),
    "map over d.values()": (lambda x: x * sum(map(lambda v: v * 2, D.values())), DICT_CHANGES),
    "map reading d in its function": (lambda x: x * max(map(lambda k: D[k], sorted(D))), DICT_CHANGES),
    "filter over d": (lambda x: x * len(list(filter(lambda k: D[k] > 1.5, D))), DICT_CHANGES),
    "itertools.chain": (lambda x: x * sum(itertools.chain(D.values(), [1.0])), DICT_CHANGES),
    "chain.from_iterable": (lambda x: x * len(list(itertools.chain.from_iterable([D, D.values()]))), DICT_CHANGES),
    "zip(d, d.values())": (lambda x: x * [v for k, v in zip(D, D.values())][-1], DICT_CHANGES),
    "for v in set": (lambda x: sum((x * v for v in S), x), SET_CHANGES),
    "sum(set)": (lambda x: x * sum(S), SET_CHANGES),
    "for m in ModuleList": (lambda x: [m(x) for m in ML][-1], (lambda: ML.append(nn.Linear(2, 2)),)),
    "list(ModuleList)": (lambda x: list(ML)[-1](x), (lambda: ML.append(nn.Linear(2, 2)),)),
    "ModuleDict.values()": (lambda x: [m(x) for m in MD.values()][-1], (lambda: MD.update({"b": nn.Linear(2, 2)}),)),
    "ModuleDict.items()": (lambda x: [m(x) for k, m in MD.items()][-1], (lambda: MD.update({"c": nn.Linear(2, 2)}),)),
}


@pytest.fixture(autouse=True)
def _fresh_containers():
    global D, S, ML, MD
    D, S = {"a": 1.0, "b": 2.0}, {1, 2}
    ML, MD = nn.ModuleList([nn.Linear(2, 2)]), nn.ModuleDict({"a": nn.Linear(2, 2)})


@pytest.mark.parametrize("name", CASES)
def test_iterated_outside_container_changes_between_calls(name):
    fn, changes = CASES[name]
    jfn = thunder.jit(fn)
    x = torch.randn(2)
    for change in (lambda: None, *changes):
        change()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.testing.assert_close(jfn(x), fn(x))
    # an unchanged container is a cache hit: the checks are reads, not a retrace
    jfn(x)
    assert thunder.cache_hits(jfn) >= 1


def test_sequential_appended_after_first_call_is_retraced():
    m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    jm = thunder.jit(m)
    x = torch.randn(3, 2)
    torch.testing.assert_close(jm(x), m(x))
    m.append(nn.Linear(2, 2))
    torch.testing.assert_close(jm(x), m(x))
    torch.testing.assert_close(jm(x), m(x))
    assert thunder.cache_misses(jm) == 2 and thunder.cache_hits(jm) == 1


def test_dict_items_yield_the_proxies_of_tensor_values():
    # transformers' get_parameter_dtype: `for t in module.parameters(): if t.is_floating_point(): return t.dtype`
    # (named_parameters iterates `_parameters.items()`); a real tensor there made is_floating_point fail and the
    # AttributeError turned into "'T5Stack' object has no attribute 'dtype'" through nn.Module.__getattr__
    m = nn.Sequential(nn.Embedding(4, 3), nn.Linear(3, 3))

    def f(m, x):
        for _, p in m.named_parameters():
            if p.is_floating_point():
                return x.to(p.dtype) * 2

    x = torch.ones(2, dtype=torch.float64)
    torch.testing.assert_close(thunder.jit(f)(m, x), f(m, x))


def test_dict_keyed_by_tensors():
    # optimizer state is keyed by parameters: iterating it reaches each key tensor as an input
    a, b = torch.randn(2), torch.randn(2)

    def f(x, state):
        for p in state:
            x = x + p * state[p]
        return x

    jf = thunder.jit(f)
    x = torch.randn(2)
    torch.testing.assert_close(jf(x, {a: 2.0, b: 3.0}), f(x, {a: 2.0, b: 3.0}))
    c = torch.randn(2)
    torch.testing.assert_close(jf(x, {a: 2.0, c: 3.0}), f(x, {a: 2.0, c: 3.0}))  # a new key tensor flows in
    torch.testing.assert_close(jf(x, {b: 2.0}), f(x, {b: 2.0}))  # fewer entries: retraced


def test_transformer_encoder_stack_matches_eager():
    torch.manual_seed(0)
    m = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2).eval()
    x = torch.randn(2, 3, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", thunder.torch.opaque.OpaqueFallbackWarning)
        torch.testing.assert_close(thunder.jit(m)(x), m(x))


def test_iterating_a_container_the_program_changed_first():
    # the program iterates the caller's original keys plus its own writes: the original keys are checked as one
    # tuple (positions in the caller's container would not match), the writes replayed by the epilogue
    def f(x):
        D["c"] = 2.0
        return x * sum(D.values()) + sum(k == "c" for k in D)

    def g(x):
        S.add(5)
        return x * sum(S)

    x = torch.ones(2)
    for fn, undo, change in ((f, lambda: D.pop("c"), lambda: D.__setitem__("b", 7.0)),
                             (g, lambda: S.discard(5), lambda: S.add(3))):
        jfn = thunder.jit(fn)
        for step in (lambda: None, lambda: None, change):
            step()
            got = jfn(x)
            undo()
            torch.testing.assert_close(got, fn(x))
            undo()
        assert thunder.cache_misses(jfn) == 2 and thunder.cache_hits(jfn) == 1


class _DtypeMixin:
    # like transformers' ModuleUtilsMixin.dtype, a property on a mixin after nn.Module in the MRO
    @property
    def dtype(self):
        for p in self.parameters():
            if p.is_floating_point():
                return p.dtype
        return torch.float32


class _Stack(nn.Module, _DtypeMixin):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(4, 3).double()

    def forward(self, ids):
        return self.embed(ids) * torch.ones(3, dtype=self.dtype)


def test_property_on_a_mixin_of_a_module():
    m = _Stack()
    ids = torch.tensor([[0, 3]])
    torch.testing.assert_close(thunder.jit(m)(ids), m(ids))


def test_iterators_made_by_the_interpreter_answer_isinstance_like_cpython():
    def f(x):
        its = (zip(D, D), enumerate(D), map(abs, [1]), filter(None, [1]), reversed([1, 2]), iter(D), iter([1]),
               itertools.chain(D, [1]))
        kinds = (zip, enumerate, map, filter, type(reversed([])), type(iter({})), type(iter([])), itertools.chain)
        return x * sum(isinstance(it, kind) for it, kind in zip(its, kinds)) + isinstance(zip(D, D), enumerate)

    x = torch.ones(2)
    torch.testing.assert_close(thunder.jit(f)(x), f(x))


def test_object_keys_of_an_iterated_dict_are_checked_by_identity():
    import enum

    class Color(enum.Enum):
        RED = 1
        BLUE = 2

    scales = {Color.RED: 2.0}

    def f(x):
        return sum((x * (10 if k is Color.BLUE else 1) for k in scales), x)  # the keys only: no value read

    jf = thunder.jit(f)
    x = torch.ones(2)
    torch.testing.assert_close(jf(x), f(x))
    scales.clear()
    scales[Color.BLUE] = 2.0  # same length, same key type, another key
    torch.testing.assert_close(jf(x), f(x))
