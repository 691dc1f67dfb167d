"""Eager raises even when the failing operation's result is never used; so must thunder (fuzzer kind W7):
metas check what is known at trace time (dtypes, sizes, constant indices), and dead-code elimination keeps
operations whose kernels check tensor data (index bounds)."""

import warnings

import pytest
import torch

import thunder


def _ones_no_size(t):
    torch.ones(*t.shape[2:])


def _zeros_no_size(t):
    torch.zeros(*t.shape[2:])


def _empty_no_size(t):
    torch.empty(*t.shape[2:])


def _sub_bool_float(t):
    torch.sub(t > 0, t)


def _sub_two_bools(t):
    (t > 0) - (t < 0)


def _rsub_bool(t):
    1.0 - (t > 0)


def _setitem_constant_list(t):
    v = torch.atan2(t[None], t[None])
    v[[0, 1]] = 2


def _setitem_constant_list_second_dim(t):
    v = t.clone()
    v[:, [0, 5]] = 2


def _setitem_int_after_none(t):
    v = t.clone()
    v[None, 0, [7]] = 1


def _getitem_constant_list(t):
    t[[0, 3]]


def _getitem_index_tensor(t, i):
    t[i]


def _index_select(t, i):
    torch.index_select(t, 0, i[0])


def _gather(t, i):
    t.gather(0, i)


def _index_add(t, i):
    t.index_add(0, i[0], torch.ones(1, 2))


def _index_copy(t, i):
    t.index_copy(0, i[0], torch.ones(1, 2))


def _scatter_add(t, i):
    t.scatter_add(0, i, torch.ones(1, 1))


def _scatter(t, i):
    t.scatter(0, i, 1.0)


def _setitem_index_tensor(t, i):
    v = t.clone()
    v[i] = 0


BAD_INDEX = torch.tensor([[7]])
CASES = {f.__name__[1:]: (f, (torch.randn(2, 2),) if f.__code__.co_argcount == 1 else (torch.randn(2, 2), BAD_INDEX))
         for f in [_ones_no_size, _zeros_no_size, _empty_no_size, _sub_bool_float, _sub_two_bools, _rsub_bool,
                   _setitem_constant_list, _setitem_constant_list_second_dim, _setitem_int_after_none,
                   _getitem_constant_list, _getitem_index_tensor, _index_select, _gather, _index_add, _index_copy,
                   _scatter_add, _scatter, _setitem_index_tensor]}


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_unused_failing_op_raises_like_eager(name, cache):
    fn, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as eager:
            fn(*[a.clone() for a in args])
        with pytest.raises(Exception) as got:
            thunder.jit(fn, cache=cache)(*[a.clone() for a in args])
    assert type(got.value) is type(eager.value), got.value
    assert str(got.value) == str(eager.value)


@pytest.mark.parametrize("name", ["getitem_index_tensor", "gather", "index_add", "setitem_index_tensor"])
def test_in_bounds_data_then_out_of_bounds_data(name):
    """The check is the kernel's, at run time: a cached program raises for the bad values of a later call."""
    fn, (t, _) = CASES[name]
    jfn = thunder.jit(fn)
    assert jfn(t, torch.tensor([[1]])) is None
    with pytest.raises(Exception) as eager:
        fn(t, BAD_INDEX)
    with pytest.raises(type(eager.value)):
        jfn(t, BAD_INDEX)


@pytest.mark.parametrize("fn", [lambda t: t[None, 1:][[0, 1]], lambda t: t[None, 1:][[0, 1]].sum(),
                                lambda t: t[None, 1:].clone().__setitem__([0, 1], 1)])
def test_constant_index_into_an_empty_tensor_is_not_checked(fn):
    """Eager's index kernels check nothing when there is nothing to gather (fuzzer seed 29)."""
    t = torch.randn(1)
    expected = fn(t)
    got = thunder.jit(fn)(t)
    if expected is None:
        assert got is None
    else:
        torch.testing.assert_close(got, expected)
