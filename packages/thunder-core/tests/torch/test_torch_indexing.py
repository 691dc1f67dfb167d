import pytest
import torch
from torchlang_helpers import b8, check, check_raises, f32, i64

GETITEM = {
    "int": (lambda x: x[1], f32(3, 4)),
    "neg_int": (lambda x: x[-1, -2], i64(3, 4)),
    "slice": (lambda x: x[1:3], f32(4, 5)),
    "slice_step": (lambda x: x[::2, 1::3], f32(5, 7)),
    "slice_neg": (lambda x: x[-3:-1, :-2], b8(4, 5)),
    "slice_clamped": (lambda x: x[2:100, -100:2], f32(4, 5)),
    "slice_empty": (lambda x: x[3:1], f32(4, 5)),
    "none": (lambda x: x[None, :, None], f32(3, 4)),
    "ellipsis": (lambda x: x[..., 0], f32(2, 3, 4)),
    "ellipsis_mid": (lambda x: x[0, ..., 1:], f32(2, 3, 4)),
    "full": (lambda x: x[:], f32(2, 3)),
    "0d": (lambda x: x[None], f32()),
    "bool_literal": (lambda x: (x[True], x[False]), f32(2)),
    "tensor_index": (lambda x, i: x[i], f32(5, 3), torch.tensor([0, 4, -1, 2])),
    "tensor_index_2d": (lambda x, i: x[:, i], f32(5, 3), torch.tensor([[0, 2], [1, -3]])),
    "tensor_index_int32": (lambda x, i: x[i], f32(5, 3), torch.tensor([1, 3], dtype=torch.int32)),
    "two_tensors": (lambda x, i, j: x[i, j], f32(5, 6), torch.tensor([0, 4]), torch.tensor([[1], [5]])),
    "separated_tensors": (lambda x, i, j: x[i, :, j], f32(4, 5, 6), torch.tensor([0, 3]), torch.tensor([1, 5])),
    "int_and_tensor": (lambda x, i: x[0, :, i], f32(2, 3, 4), torch.tensor([0, 1])),
    "list": (lambda x: x[[0, 2, -1]], f32(4, 3)),
    "list_bool": (lambda x: x[:, [True, False, True]], f32(4, 3)),
    "slice_then_tensor": (lambda x, i: x[1:, None, i], f32(4, 5), torch.tensor([2, 0])),
}


@pytest.mark.parametrize("name", list(GETITEM))
def test_getitem(name):
    fn, *args = GETITEM[name]
    check(fn, *args, calls=("torch.Tensor.__getitem__",))


GETITEM_ERRORS = {
    "too_many": (IndexError, lambda x: x[0, 0, 0], f32(2, 3)),
    "out_of_range": (IndexError, lambda x: x[5], f32(2, 3)),
    "negative_step": (ValueError, lambda x: x[::-1], f32(2, 3)),
    "float_tensor": (IndexError, lambda x, i: x[i], f32(2, 3), f32(2)),
}


@pytest.mark.parametrize("name", list(GETITEM_ERRORS))
def test_getitem_error(name):
    exc, fn, *args = GETITEM_ERRORS[name]
    check_raises(exc, fn, *args)


def test_getitem_bool_mask_is_a_clear_error():
    from thunder.frontend.simple_trace import trace_program

    with pytest.raises(NotImplementedError, match="boolean mask"):
        trace_program(lambda x, m: x[m], (f32(2, 3), b8(2, 3)))


OPS = {
    "index_select": (lambda x, i: torch.index_select(x, 1, i), f32(3, 5), torch.tensor([4, 0, 0]), "torch.index_select"),
    "index_select_method_0d": (lambda x, i: x.index_select(0, i), f32(3, 5), torch.tensor(2), "torch.index_select"),
    "gather": (lambda x, i: torch.gather(x, 1, i), f32(3, 5), i64(3, 2, low=0, high=5), "torch.gather"),
    "gather_smaller": (lambda x, i: x.gather(0, i), f32(4, 5), i64(2, 3, low=0, high=4), "torch.gather"),
    "gather_int": (lambda x, i: x.gather(-1, i), i64(4, 5), i64(4, 2, low=0, high=5), "torch.gather"),
    "take_along_dim": (lambda x, i: torch.take_along_dim(x, i, 1), f32(3, 5), i64(1, 2, low=0, high=5),
                       "torch.take_along_dim"),
    "take_along_dim_flat": (lambda x, i: x.take_along_dim(i), f32(3, 5), i64(4, low=0, high=15), "torch.take_along_dim"),
    "masked_fill": (lambda x, m: x.masked_fill(m, -1.5), f32(3, 4), b8(3, 4), "torch.masked_fill"),
    "masked_fill_bcast": (lambda x, m: torch.masked_fill(x, m, float("-inf")), f32(2, 3, 4), b8(3, 1),
                          "torch.masked_fill"),
    "masked_fill_int": (lambda x, m: x.masked_fill(m, 7), i64(3, 4), b8(4), "torch.masked_fill"),
    "masked_fill_int_float_value": (lambda x, m: x.masked_fill(m, 1.5), i64(3, 4), b8(4), "torch.masked_fill"),
    "masked_fill_bool": (lambda x, m: x.masked_fill(m, 0), b8(3, 4), b8(4), "torch.masked_fill"),
    "masked_fill_tensor_value": (lambda x, m, v: x.masked_fill(m, v), f32(3, 4), b8(3, 4), torch.tensor(2.0),
                                 "torch.masked_fill"),
    "tril": (lambda x: x.tril(), f32(4, 5), "torch.tril"),
    "tril_diag": (lambda x: torch.tril(x, -1), i64(2, 4, 3), "torch.tril"),
    "triu": (lambda x: x.triu(1), f32(4, 5), "torch.triu"),
    "triu_bool": (lambda x: torch.triu(x), b8(3, 3), "torch.triu"),
}


@pytest.mark.parametrize("name", list(OPS))
def test_indexing_op(name):
    fn, *args, call = OPS[name]
    check(fn, *args, calls=(call,))


ERRORS = {
    "index_select_float": (RuntimeError, lambda x, i: x.index_select(0, i), f32(3), f32(2)),
    "gather_too_large": (RuntimeError, lambda x, i: x.gather(0, i), f32(3, 4), i64(2, 5, low=0, high=3)),
    "gather_ndim": (RuntimeError, lambda x, i: x.gather(0, i), f32(3, 4), i64(2, low=0, high=3)),
    "masked_fill_long_mask": (RuntimeError, lambda x, m: x.masked_fill(m, 0), f32(3), i64(3)),
    "tril_1d": (RuntimeError, lambda x: x.tril(), f32(3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_indexing_error(name):
    exc, fn, *args = ERRORS[name]
    check_raises(exc, fn, *args)
