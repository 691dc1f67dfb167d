import pytest
import torch
from torchlang_helpers import b8, check, check_raises, f32, i64

CASES = {
    "view": (lambda x: x.view(6, 4), f32(2, 3, 4), "torch.Tensor.reshape"),
    "view_tuple_infer": (lambda x: x.view((-1, 4)), i64(2, 3, 4), "torch.Tensor.reshape"),
    "view_as": (lambda x, y: x.view_as(y), f32(2, 6), f32(3, 4), "torch.Tensor.reshape_as"),
    "reshape": (lambda x: x.reshape(4, -1), b8(2, 3, 4), "torch.Tensor.reshape"),
    "torch_reshape": (lambda x: torch.reshape(x, (3, 8)), f32(2, 3, 4), "torch.Tensor.reshape"),
    "reshape_0d": (lambda x: x.reshape(1, 1), f32(), "torch.Tensor.reshape"),
    "flatten": (lambda x: torch.flatten(x), f32(2, 3, 4), "torch.flatten"),
    "flatten_range": (lambda x: x.flatten(1, 2), i64(2, 3, 4, 5), "torch.flatten"),
    "flatten_0d": (lambda x: x.flatten(), f32(), "torch.flatten"),
    "unflatten": (lambda x: x.unflatten(1, (2, -1)), f32(3, 8), "torch.unflatten"),
    "permute": (lambda x: x.permute(2, 0, 1), f32(2, 3, 4), "torch.Tensor.permute"),
    "permute_tuple_neg": (lambda x: torch.permute(x, (-1, 0, 1)), i64(2, 3, 4), "torch.Tensor.permute"),
    "transpose": (lambda x: x.transpose(0, -1), f32(2, 3, 4), "torch.transpose"),
    "swapaxes": (lambda x: torch.swapaxes(x, 1, 2), b8(2, 3, 4), "torch.transpose"),
    "t": (lambda x: x.t(), f32(2, 3), "torch.t"),
    "t_1d": (lambda x: x.t(), f32(3), "torch.t"),
    "mT": (lambda x: x.mT, f32(2, 3, 4), "torch.transpose"),
    "T": (lambda x: x.T, f32(2, 3), "torch.Tensor.permute"),
    "unsqueeze": (lambda x: x.unsqueeze(1), f32(2, 3), "torch.unsqueeze"),
    "unsqueeze_neg": (lambda x: torch.unsqueeze(x, -1), i64(2, 3), "torch.unsqueeze"),
    "unsqueeze_0d": (lambda x: x.unsqueeze(0), f32(), "torch.unsqueeze"),
    "squeeze_all": (lambda x: x.squeeze(), f32(1, 3, 1, 2), "torch.squeeze"),
    "squeeze_dim": (lambda x: x.squeeze(2), f32(1, 3, 1, 2), "torch.squeeze"),
    "squeeze_noop": (lambda x: x.squeeze(1), f32(1, 3, 1, 2), "torch.squeeze"),
    "squeeze_dims": (lambda x: torch.squeeze(x, (0, 2)), b8(1, 3, 1, 2), "torch.squeeze"),
    "expand": (lambda x: x.expand(2, 3, 4), f32(3, 1), "torch.Tensor.expand"),
    "expand_minus1": (lambda x: x.expand(-1, 4), i64(3, 1), "torch.Tensor.expand"),
    "expand_as": (lambda x, y: x.expand_as(y), f32(1, 4), f32(3, 4), "torch.Tensor.expand_as"),
    "broadcast_to": (lambda x: torch.broadcast_to(x, (2, 3, 4)), f32(4), "torch.broadcast_to"),
    "contiguous": (lambda x: x.transpose(0, 1).contiguous() * 2, f32(2, 3), "torch.transpose"),
    "split_size": (lambda x: x.split(2), f32(5, 3), "torch.split"),
    "split_sections": (lambda x: torch.split(x, [1, 2], dim=1), i64(5, 3), "torch.split"),
    "chunk": (lambda x: x.chunk(3, -1), f32(2, 7), "torch.chunk"),
    "chunk_uneven": (lambda x: torch.chunk(x, 4), f32(6), "torch.chunk"),
    "tensor_split": (lambda x: torch.tensor_split(x, 3), f32(7), "torch.tensor_split"),
    "tensor_split_idx": (lambda x: x.tensor_split([1, 4], dim=1), f32(2, 6), "torch.tensor_split"),
    "cat": (lambda x, y: torch.cat([x, y], 1), f32(2, 3), f32(2, 4), "torch.cat"),
    "cat_promote": (lambda x, y: torch.cat((x, y)), f32(2, 3), i64(1, 3), "torch.cat"),
    "concat": (lambda x, y: torch.concat([x, y], dim=-1), b8(2, 3), b8(2, 1), "torch.cat"),
    "stack": (lambda x, y: torch.stack([x, y]), f32(2, 3), f32(2, 3), "torch.stack"),
    "stack_dim": (lambda x, y: torch.stack((x, y), dim=-1), i64(2, 3), i64(2, 3), "torch.stack"),
    "movedim": (lambda x: x.movedim(0, -1), f32(2, 3, 4), "torch.movedim"),
    "movedim_multi": (lambda x: torch.movedim(x, (0, 1), (2, 0)), f32(2, 3, 4), "torch.movedim"),
    "size_and_len": (lambda x: (x.size(), x.size(-1), x.dim(), x.numel(), len(x), x.shape), f32(2, 3), None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_shape_op(name):
    fn, *args, call = CASES[name]
    check(fn, *args, calls=(call,) if call else ())


ERRORS = {
    "view_bad": (RuntimeError, lambda x: x.view(4, 2), f32(2, 3)),
    "view_two_holes": (RuntimeError, lambda x: x.view(-1, -1), f32(2, 3)),
    "expand_bad": (RuntimeError, lambda x: x.expand(4, 2), f32(2, 3)),
    "expand_leading_minus1": (RuntimeError, lambda x: x.expand(-1, 2, 3), f32(2, 3)),
    "permute_dup": (RuntimeError, lambda x: x.permute(0, 0), f32(2, 3)),
    "permute_len": (RuntimeError, lambda x: x.permute(0), f32(2, 3)),
    "transpose_range": (IndexError, lambda x: x.transpose(0, 2), f32(2, 3)),
    "squeeze_range": (IndexError, lambda x: x.squeeze(3), f32(2, 3)),
    "unsqueeze_range": (IndexError, lambda x: x.unsqueeze(4), f32(2, 3)),
    "t_3d": (RuntimeError, lambda x: x.t(), f32(2, 3, 4)),
    "stack_sizes": (RuntimeError, lambda x, y: torch.stack([x, y]), f32(2, 3), f32(2, 4)),
    "cat_sizes": (RuntimeError, lambda x, y: torch.cat([x, y]), f32(2, 3), f32(3, 4)),
    "split_zero": (RuntimeError, lambda x: x.split(0), f32(2, 3)),
    "split_sum": (RuntimeError, lambda x: x.split([1, 2]), f32(2, 3)),
    "chunk_zero": (RuntimeError, lambda x: x.chunk(0), f32(2, 3)),
    "unflatten_bad": (RuntimeError, lambda x: x.unflatten(1, (2, 2)), f32(2, 3)),
    "movedim_repeat": (RuntimeError, lambda x: x.movedim((0, 1), (0, 0)), f32(2, 3)),
    "len_0d": (TypeError, lambda x: len(x), f32()),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_shape_op_error(name):
    exc, fn, *args = ERRORS[name]
    check_raises(exc, fn, *args)
