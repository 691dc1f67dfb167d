import pytest
import torch
import torch.nn.functional as F
from torchlang_helpers import check, check_raises, f32

CASES = {
    "matmul_2d": (lambda a, b: torch.matmul(a, b), f32(3, 4), f32(4, 5), "torch.matmul"),
    "matmul_batched_bcast": (lambda a, b: a.matmul(b), f32(2, 1, 3, 4), f32(5, 4, 2), "torch.matmul"),
    "matmul_1d_1d": (lambda a, b: a @ b, f32(4), f32(4), "torch.matmul"),
    "matmul_1d_3d": (lambda a, b: a @ b, f32(4), f32(2, 4, 3), "torch.matmul"),
    "matmul_3d_1d": (lambda a, b: a @ b, f32(2, 3, 4), f32(4), "torch.matmul"),
    "matmul_int": (lambda a, b: a @ b, torch.randint(0, 5, (2, 3)), torch.randint(0, 5, (3, 2)), "torch.matmul"),
    "rmatmul": (lambda a, b: a.__rmatmul__(b), f32(4, 5), f32(3, 4), "torch.Tensor.__rmatmul__"),
    "mm": (lambda a, b: torch.mm(a, b), f32(3, 4), f32(4, 5), "torch.mm"),
    "bmm": (lambda a, b: a.bmm(b), f32(2, 3, 4), f32(2, 4, 5), "torch.bmm"),
    "baddbmm": (lambda c, a, b: torch.baddbmm(c, a, b, beta=0.5, alpha=2.0), f32(3, 5), f32(2, 3, 4), f32(2, 4, 5),
                "torch.baddbmm"),
    "baddbmm_beta0": (lambda c, a, b: torch.baddbmm(c, a, b, beta=0), f32(2, 3, 5), f32(2, 3, 4), f32(2, 4, 5),
                      "torch.baddbmm"),
    "linear": (lambda x, w, b: F.linear(x, w, b), f32(2, 3, 4), f32(5, 4), f32(5), "torch.nn.functional.linear"),
    "linear_nobias": (lambda x, w: F.linear(x, w), f32(3, 4), f32(5, 4), "torch.nn.functional.linear"),
    "linear_1d_weight": (lambda x, w: F.linear(x, w), f32(3, 4), f32(4), "torch.nn.functional.linear"),
    "outer": (lambda a, b: torch.outer(a, b), f32(3), f32(4), "torch.outer"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_linalg(name):
    fn, *args, call = CASES[name]
    check(fn, *args, calls=(call,), tol=dict(rtol=1e-5, atol=1e-5))


ERRORS = {
    "matmul_shapes": (RuntimeError, lambda a, b: a @ b, f32(2, 3), f32(2, 3)),
    "matmul_dtypes": (RuntimeError, lambda a, b: a @ b, f32(2, 3), f32(3, 2).double()),
    "matmul_0d": (RuntimeError, lambda a, b: torch.matmul(a, b), f32(), f32(2, 3)),
    "mm_1d": (RuntimeError, lambda a, b: torch.mm(a, b), f32(3), f32(3, 3)),
    "bmm_2d": (RuntimeError, lambda a, b: torch.bmm(a, b), f32(2, 3), f32(3, 3)),
    "bmm_batch": (RuntimeError, lambda a, b: torch.bmm(a, b), f32(2, 2, 3), f32(3, 3, 3)),
    "linear_shapes": (RuntimeError, lambda x, w: F.linear(x, w), f32(3, 4), f32(5, 3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_linalg_error(name):
    exc, fn, *args = ERRORS[name]
    check_raises(exc, fn, *args)
