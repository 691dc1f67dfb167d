import pytest
import torch
from torchlang_helpers import b8, check, check_raises, f32, i64

CASES = {
    "sum": (lambda x: x.sum(), f32(3, 4), "torch.sum"),
    "sum_dim": (lambda x: torch.sum(x, 1), f32(3, 4), "torch.sum"),
    "sum_dims_keepdim": (lambda x: x.sum((0, 2), keepdim=True), f32(2, 3, 4), "torch.sum"),
    "sum_neg_dim": (lambda x: x.sum(dim=-1), f32(2, 3, 4), "torch.sum"),
    "sum_int": (lambda x: x.sum(0), i64(3, 4), "torch.sum"),
    "sum_int32": (lambda x: x.sum(), i64(3, 4).to(torch.int32), "torch.sum"),
    "sum_bool": (lambda x: x.sum(1), b8(3, 4), "torch.sum"),
    "sum_dtype": (lambda x: x.sum(1, dtype=torch.float64), f32(3, 4), "torch.sum"),
    "sum_bf16": (lambda x: x.sum(-1), f32(3, 8).bfloat16(), "torch.sum"),
    "sum_0d": (lambda x: x.sum(0), f32(), "torch.sum"),
    "sum_empty_list": (lambda x: x.sum([]), f32(2, 3), "torch.sum"),
    "prod": (lambda x: x.prod(), f32(2, 3), "torch.prod"),
    "prod_dim_int": (lambda x: torch.prod(x, 1, keepdim=True), i64(2, 3), "torch.prod"),
    "prod_bool": (lambda x: x.prod(0), b8(2, 3), "torch.prod"),
    "mean": (lambda x: x.mean(), f32(3, 4), "torch.mean"),
    "mean_dims": (lambda x: torch.mean(x, (0, -1), keepdim=True), f32(2, 3, 4), "torch.mean"),
    "mean_int_dtype": (lambda x: x.mean(dtype=torch.float32), i64(3, 4), "torch.mean"),
    "amax": (lambda x: x.amax(), f32(3, 4), "torch.amax"),
    "amax_dim": (lambda x: torch.amax(x, -1, keepdim=True), i64(3, 4), "torch.amax"),
    "amin": (lambda x: x.amin((0, 1)), f32(2, 3, 4), "torch.amin"),
    "max_all": (lambda x: x.max(), f32(3, 4), "torch.max"),
    "max_dim": (lambda x: tuple(torch.max(x, 1)), f32(3, 4), "torch.max"),
    "max_dim_fields": (lambda x: (lambda r: (r.values, r.indices))(x.max(dim=0, keepdim=True)), i64(3, 4), "torch.max"),
    "max_binary": (lambda x, y: torch.max(x, y), f32(3, 4), f32(4), "torch.max"),
    "min_all": (lambda x: torch.min(x), i64(5), "torch.min"),
    "min_dim": (lambda x: tuple(x.min(-1)), f32(3, 4), "torch.min"),
    "min_binary": (lambda x, y: x.min(y), f32(3, 4), f32(3, 4), "torch.min"),
    "argmax": (lambda x: x.argmax(), f32(3, 4), "torch.argmax"),
    "argmax_dim": (lambda x: torch.argmax(x, 1, keepdim=True), f32(3, 4), "torch.argmax"),
    "argmax_keepdim_all": (lambda x: x.argmax(keepdim=True), f32(3, 4), "torch.argmax"),
    "argmin": (lambda x: x.argmin(0), i64(3, 4), "torch.argmin"),
    "var": (lambda x: x.var(), f32(3, 4), "torch.var"),
    "var_dim": (lambda x: torch.var(x, 1, keepdim=True), f32(3, 4), "torch.var"),
    "var_unbiased_false": (lambda x: x.var(0, unbiased=False), f32(3, 4), "torch.var"),
    "var_correction": (lambda x: x.var(dim=(0, 1), correction=0), f32(3, 4), "torch.var"),
    "var_positional_unbiased": (lambda x: torch.var(x, False), f32(3, 4), "torch.var"),
    "std": (lambda x: x.std(1), f32(3, 4), "torch.std"),
    "std_correction": (lambda x: torch.std(x, correction=2), f32(3, 4), "torch.std"),
    "var_mean": (lambda x: torch.var_mean(x, 1), f32(3, 4), "torch.var_mean"),
    "var_mean_kw": (lambda x: torch.var_mean(x, dim=0, correction=0, keepdim=True), f32(3, 4), "torch.var_mean"),
    "std_mean": (lambda x: torch.std_mean(x), f32(3, 4), "torch.std_mean"),
    "any": (lambda x: x.any(), b8(3, 4), "torch.any"),
    "any_dim": (lambda x: torch.any(x, 1), f32(3, 4) > 1, "torch.any"),
    "any_float": (lambda x: x.any(0, keepdim=True), torch.tensor([[0.0, 1.0], [0.0, 0.0]]), "torch.any"),
    "all": (lambda x: x.all(), b8(3, 4), "torch.all"),
    "all_int_dim": (lambda x: torch.all(x, -1), i64(3, 4, low=0, high=2), "torch.all"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_reduction(name):
    fn, *args, call = CASES[name]
    check(fn, *args, calls=(call,))


ERRORS = {
    "mean_int": (RuntimeError, lambda x: x.mean(), i64(3)),
    "var_int": (RuntimeError, lambda x: x.var(), i64(3)),
    "std_int": (RuntimeError, lambda x: x.std(), i64(3)),
    "dup_dims": (RuntimeError, lambda x: x.sum((0, 0)), f32(2, 3)),
    "dim_range": (IndexError, lambda x: x.sum(2), f32(2, 3)),
    "amax_empty": (IndexError, lambda x: x.amax(1), f32(2, 0)),
    "argmax_range": (IndexError, lambda x: x.argmax(3), f32(2, 3)),
    "max_empty": (RuntimeError, lambda x: x.max(), f32(0)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_reduction_error(name):
    exc, fn, *args = ERRORS[name]
    check_raises(exc, fn, *args)
