"""Writes of one value per position through an expanded view (``v[mask] = c``, masked_fill_, index_fill_),
which eager allows (with a deprecation warning), on expands of inputs, of views of them and of intermediates."""

import warnings

import pytest
import torch

import thunder

CASES = {
    "mask_setitem_scalar": lambda t: t.unsqueeze(-1).expand(*t.shape, 2).__setitem__(
        t.unsqueeze(-1).expand(*t.shape, 2) > 0, 0),
    "mask_setitem_0d": lambda t: t.unsqueeze(-1).expand(*t.shape, 2).__setitem__(
        t.unsqueeze(-1).expand(*t.shape, 2) > 0, torch.tensor(7)),
    "constant_mask": lambda t: t.unsqueeze(-1).expand(*t.shape, 2).__setitem__(
        torch.tensor([[True, False], [False, False]]), 5),
    "masked_fill_of_intermediate": lambda t: (t * 2).unsqueeze(0).expand(3, *t.shape).masked_fill_(
        (t * 2).unsqueeze(0).expand(3, *t.shape) < 0, 9),
    "index_fill_through_view": lambda t: t[None].expand(2, 2).index_fill_(1, torch.tensor([1]), 4),
    "index_list_setitem": lambda t: t.expand(2, *t.shape).__setitem__([0, 1], 2),
    "index_list_and_int_setitem": lambda t: t.expand(2, *t.shape).__setitem__(([0], 1), 3),
    "index_tensor_setitem_0d": lambda t: t.expand(2, *t.shape).__setitem__(
        (torch.tensor([1]), slice(None)), torch.tensor(4)),
}


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_like_eager(name, cache):
    fn = CASES[name]
    expected_input, actual_input = torch.tensor([1, -2]), torch.tensor([1, -2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager's deprecation of writes into expanded tensors
        expected = fn(expected_input)
        actual = thunder.jit(fn, cache=cache)(actual_input)
    assert torch.equal(actual_input, expected_input)
    if expected is not None:
        assert torch.equal(actual, expected)
