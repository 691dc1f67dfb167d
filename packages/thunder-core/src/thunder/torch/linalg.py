"""Matrix products: matmul (and @), mm, bmm, baddbmm, addmm, linear, outer."""

from __future__ import annotations

import torch

from thunder.core import dtypes, prims
from thunder.core.errors import check
from thunder.core.proxies import TensorProxy
from thunder.torch import elementwise as ew
from thunder.torch import shape_ops
from thunder.torch.matmul_errors import check_bmm, check_linear, check_matmul, check_mm
from thunder.torch.registry import torchsymbol


def _check_tensors(fn_name, *xs):
    for x in xs:
        check(isinstance(x, TensorProxy), lambda: f"{fn_name}(): argument must be Tensor, not {type(x).__name__}",
              TypeError)


@torchsymbol(torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, method=("matmul", "__matmul__"))
def matmul(a, b):
    _check_tensors("matmul", a, b)
    check(a.ndim >= 1 and b.ndim >= 1, lambda: f"both arguments to matmul need to be at least 1D, but they are "
          f"{a.ndim}D and {b.ndim}D")
    check_matmul(a, b)
    return prims.matmul(a, b)


@torchsymbol(torch.Tensor.__rmatmul__, method="__rmatmul__")
def rmatmul(a, b):
    return matmul(b, a)


@torchsymbol(torch.mm, torch.Tensor.mm, method="mm")
def mm(a, b):
    _check_tensors("mm", a, b)
    check(a.ndim == 2, "self must be a matrix")
    check(b.ndim == 2, "mat2 must be a matrix")
    check_mm(a, b)
    return prims.matmul(a, b)


@torchsymbol(torch.bmm, torch.Tensor.bmm, method="bmm")
def bmm(a, b):
    _check_tensors("bmm", a, b)
    check(a.ndim == 3, "batch1 must be a 3D tensor")
    check(b.ndim == 3, "batch2 must be a 3D tensor")
    check_bmm(a, b)
    return prims.matmul(a, b)


def _add_scaled(input, prod, beta, alpha):
    """``beta * input + alpha * prod`` as eager's addmm family computes it: ``input`` takes ``prod``'s shape (eager
    expands it, checked before), integer tensors take the scalars as integers, and beta == 0 ignores ``input`` (even
    nan/inf in it)."""
    if dtypes.is_integer_dtype(prod.dtype):
        beta, alpha = int(beta), int(alpha)
    if alpha != 1:
        prod = ew.mul(prod, alpha)
    if beta == 0:
        return prod
    return ew.add(ew.mul(input, beta) if beta != 1 else input, prod)


@torchsymbol(torch.baddbmm, torch.Tensor.baddbmm, method="baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if isinstance(batch1, TensorProxy) and isinstance(batch2, TensorProxy) and batch1.ndim >= 2 and batch2.ndim >= 3:
        # eager's first check, before the batches' ranks
        shape_ops.expand_shape(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return _add_scaled(input, bmm(batch1, batch2), beta, alpha)


@torchsymbol(torch.addmm, torch.Tensor.addmm, method="addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    # eager's checks in eager's order (PyTorch's meta function checks none of input's: an opaque call was wrong)
    _check_tensors("addmm", input, mat1, mat2)
    check(mat1.ndim == 2, lambda: f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    check(mat2.ndim == 2, lambda: f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    shape_ops.expand_shape(input, (mat1.shape[0], mat2.shape[1]))
    for name, x in (("self", input), ("mat1", mat1)):
        check(x.dtype is mat2.dtype, lambda: f"{name} and mat2 must have the same dtype, but got "
              f"{dtypes.torch_scalar_name(x.dtype)} and {dtypes.torch_scalar_name(mat2.dtype)}")
    check_mm(mat1, mat2)  # the dtypes are equal here: its size check
    kernel = "addmm_impl_cpu_" if mat2.device.type == "cpu" else "addmm_cuda"
    check(not dtypes.is_boolean_dtype(mat2.dtype), lambda: f"\"{kernel}\" not implemented for 'Bool'", NotImplementedError)
    return _add_scaled(input, mm(mat1, mat2), beta, alpha)


@torchsymbol(torch.nn.functional.linear, method=())
def linear(input, weight, bias=None):
    _check_tensors("linear", input, weight)
    # eager's messages, in eager's order
    check(input.ndim >= 1 and weight.ndim >= 1, lambda: f"both arguments to linear need to be at least 1D, but they "
          f"are {input.ndim}D and {weight.ndim}D")
    check(weight.ndim <= 2, lambda: f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D")
    if bias is not None:
        # eager adds the bias expanded to the output's shape: its error for a bias that does not fit
        shape_ops.expand_shape(bias, (*input.shape[:-1], *weight.shape[:-1]))
    if input.shape[-1] == weight.shape[-1]:  # else the prim raises eager's size error, which comes first
        check_linear(input, weight, bias)
    if bias is not None and input.ndim == 1 and weight.ndim == 1:
        return ew.add(prims.linear(input, weight, None), bias)  # eager: a dot, then an add that promotes
    return prims.linear(input, weight, bias)


@torchsymbol(torch.outer, torch.ger, torch.Tensor.outer, torch.Tensor.ger, method=("outer", "ger"))
def outer(a, b):
    check(a.ndim == 1 and b.ndim == 1, lambda: f"outer: expected 1-D tensors, got {a.ndim}-D and {b.ndim}-D")
    return ew.mul(shape_ops.unsqueeze(a, 1), shape_ops.unsqueeze(b, 0))
