"""Outside values are inputs reached by provenance and checked: after the caller changes any of them,
the next call gives CPython's result (the new value flows in, or the function is retraced)."""

import builtins
import enum
import types

import pytest
import torch

import thunder
from helpers import settings

SCALE = 2


def _check_sequence(fn, steps, x):
    """Runs ``fn`` eagerly and jitted after each mutation in ``steps``; results must agree every time."""
    jfn = thunder.jit(fn)
    for mutate in [lambda: None, *steps]:
        mutate()
        torch.testing.assert_close(jfn(x), fn(x))
    return jfn


def test_global_number():
    def f(x):
        return x * SCALE

    def set_scale(v):
        global SCALE
        SCALE = v

    try:
        jf = _check_sequence(f, [lambda: set_scale(3), lambda: set_scale(3.5)], torch.ones(2))
        assert thunder.cache_misses(jf) == 3
    finally:
        set_scale(2)


def test_builtin_shadowed_and_restored():
    def f(x):
        return x * abs(-3)

    def shadow():
        builtins.abs = lambda v: 10

    def restore():
        builtins.abs = original

    original = builtins.abs
    try:
        _check_sequence(f, [shadow, restore], torch.ones(2))
    finally:
        builtins.abs = original


def test_default_argument_values():
    def f(x, k=2):
        return x * k

    _check_sequence(f, [lambda: setattr(f, "__defaults__", (5,))], torch.ones(2))


def test_closure_cell_contents():
    def make():
        k = 2

        def f(x):
            return x + k

        def set_k(v):
            nonlocal k
            k = v

        return f, set_k

    f, set_k = make()
    _check_sequence(f, [lambda: set_k(7), lambda: set_k(torch.full((2,), 3.0))], torch.ones(2))


def test_module_attributes():
    def f(x):
        return x * settings.FACTOR if settings.ENABLED else x

    def restore():
        settings.FACTOR, settings.ENABLED = 2.0, True

    try:
        _check_sequence(f, [lambda: setattr(settings, "FACTOR", 4.0), lambda: setattr(settings, "ENABLED", False)],
                        torch.ones(2))
    finally:
        restore()


def test_plain_object_attributes():
    cfg = types.SimpleNamespace(scale=2.0, bias=torch.zeros(2))

    def f(x):
        return x * cfg.scale + cfg.bias

    _check_sequence(f, [lambda: setattr(cfg, "scale", -1.0), lambda: setattr(cfg, "bias", torch.ones(2))],
                    torch.ones(2))


def test_global_function_replaced():
    def f(x):
        return _helper(x)

    global _helper
    original = _helper
    try:
        _check_sequence(f, [lambda: globals().__setitem__("_helper", lambda x: x * 100)], torch.ones(2))
    finally:
        _helper = original


def _helper(x):
    return x + 1


def test_checks_cost_a_lookup_not_a_retrace():
    def f(x):
        return x * settings.FACTOR + SCALE

    jf = thunder.jit(f)
    for _ in range(5):
        jf(torch.ones(2))
    assert thunder.cache_misses(jf) == 1 and thunder.cache_hits(jf) == 4


def test_user_exceptions_propagate_unchanged():
    class Custom(Exception):
        pass

    def f(x):
        if x.shape[0] == 2:
            raise Custom("two rows: refused")
        return x

    with pytest.raises(Custom, match="two rows: refused"):
        thunder.jit(f)(torch.ones(2))
    with pytest.raises(KeyError):
        thunder.jit(lambda x: {}["missing"])(torch.ones(1))


def test_nested_lists_of_numbers_are_checked_by_value():
    def f(x, idx):
        return x[idx]  # the index goes whole to the indexing op: its values must be checked

    jf = thunder.jit(f)
    x = torch.randn(4, 4, 4)
    first, second = ([0, 2, 3], [1, 3, 3], [0, 0, 2]), ([0, 0, 3], [1, 1, 3], [0, 0, 2])
    torch.testing.assert_close(jf(x, first), f(x, first))
    torch.testing.assert_close(jf(x, second), f(x, second))
    assert thunder.cache_misses(jf) == 2


class _Mode(enum.Enum):
    TRAIN = 1
    EVAL = 2


class _Config:
    pass


_FIRST, _SECOND = _Config(), _Config()


def test_objects_compared_by_identity_are_checked_by_identity():
    # two enum members or two objects of one class have the same type: the prologue checked only the type, so the
    # second call took the first one's branch (silently wrong)
    def by_enum(x, mode):
        return x * 2 if mode is _Mode.TRAIN else x * 3

    def by_equality(x, mode):
        return x * 2 if mode == _Mode.TRAIN else x * 3

    def by_object(x, config):
        return x * 2 if config is _FIRST else x * 3

    def in_a_dict(x, table):
        return x * table[_Mode.EVAL]

    x = torch.ones(2)
    for fn, firsts, seconds in ((by_enum, _Mode.TRAIN, _Mode.EVAL), (by_equality, _Mode.TRAIN, _Mode.EVAL),
                                (by_object, _FIRST, _SECOND),
                                (in_a_dict, {_Mode.EVAL: 2.0}, {_Mode.EVAL: 5.0})):
        jfn = thunder.jit(fn)
        for arg in (firsts, seconds, firsts):
            assert torch.equal(jfn(x, arg), fn(x, arg)), (fn.__name__, arg)
        assert thunder.cache_hits(jfn) >= 1, fn.__name__


def test_max_of_tensors_keeps_both_candidates_for_another_continuation():
    # max(a, b) compares inside native code: the read split the program while only max held b, so the
    # continuation traced for the other answer needed a tensor no segment had kept (an internal error)
    def f(x):
        return max(x[0], x[2]) * 2, min(x[1], x[3], key=lambda t: -t), sorted([x[0], x[3], x[1]])

    jfn = thunder.jit(f)
    for x in (torch.arange(4.0), -torch.arange(4.0), torch.arange(4.0)):
        actual, expected = jfn(x), f(x)
        assert torch.equal(actual[0], expected[0]) and torch.equal(actual[1], expected[1])
        assert all(torch.equal(a, e) for a, e in zip(actual[2], expected[2], strict=True))
