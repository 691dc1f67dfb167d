"""Reductions: sum, mean, prod, amax/amin, max/min, argmax/argmin, var/std/var_mean, any/all.

Low-precision floats reduce in float32 and convert back, as PyTorch's kernels accumulate in float32.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes, prims
from thunder.core.errors import check
from thunder.core.proxies import TensorProxy
from thunder.core.shapes import canonicalize_dims, numel
from thunder.torch import elementwise as ew
from thunder.torch.registry import torchsymbol


def reduction_dims(a, dim) -> tuple[int, ...]:
    """Canonical dims to reduce: None or an empty list means all dims."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(a.ndim))
    check(not isinstance(dim, float), "reduction dim must be an int or a sequence of ints", TypeError)
    dims = canonicalize_dims(a.ndim, dim)
    for d in dims:
        check(dims.count(d) == 1, lambda: f"dim {d} appears multiple times in the list of dims")
    return tuple(d for d in dims if a.ndim > 0)


def keep_dims(out, a, dims):
    """``out`` (``a`` reduced over ``dims``) with the reduced dims put back as size 1."""
    shape = tuple(1 if i in dims else s for i, s in enumerate(a.shape))
    return prims.broadcast_in_dim(out, shape, tuple(i for i in range(a.ndim) if i not in dims))


def _every_dim(dim) -> bool:
    """``dim`` names no dim: the reduction is over all of them (None, (), [])."""
    return dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)


def _check_nonempty(a, dims, fn_name, given=None):
    """``given``: the dims as the program wrote them, which amax/amin's message names (``dim -1``)."""
    named = dims if _every_dim(given) else tuple(given) if isinstance(given, (tuple, list)) else (given,)
    for d, name in zip(dims, named if len(named) == len(dims) else dims):
        check(a.shape[d] != 0, lambda: f"{fn_name}(): Expected reduction dim {name} to have non-zero size.", IndexError)


def _accumulate(prim, a, dims, keepdim, out_dtype):
    """prim over ``dims``, computing low-precision floats in float32, then converting to ``out_dtype``."""
    compute = dtypes.float32 if dtypes.is_low_precision(out_dtype) else out_dtype
    x = ew.convert(a, compute)
    out = prim(x, dims)
    out = ew.convert(out, out_dtype)
    return keep_dims(out, a, dims) if keepdim else out


def _sum_dtype(a, dtype):
    if dtype is not None:
        return dtypes.to_dtype(dtype)
    if dtypes.is_integer_dtype(a.dtype) or dtypes.is_boolean_dtype(a.dtype):
        return dtypes.int64
    return a.dtype


@torchsymbol(torch.sum, torch.Tensor.sum, method="sum")
def sum(a, dim=None, keepdim=False, *, dtype=None):
    return _accumulate(prims.sum, a, reduction_dims(a, dim), keepdim, _sum_dtype(a, dtype))


@torchsymbol(torch.prod, torch.Tensor.prod, method="prod")
def prod(a, dim=None, keepdim=False, *, dtype=None):
    return _accumulate(prims.prod, a, reduction_dims(a, dim), keepdim, _sum_dtype(a, dtype))


@torchsymbol(torch.mean, torch.Tensor.mean, method="mean")
def mean(a, dim=None, keepdim=False, *, dtype=None):
    out_dtype = a.dtype if dtype is None else dtypes.to_dtype(dtype)
    check(dtypes.is_float_dtype(out_dtype) or dtypes.is_complex_dtype(out_dtype),
          lambda: f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} dtype must be either "
          f"a floating point or complex dtype. Got: {dtypes.torch_scalar_name(out_dtype)}")
    dims = reduction_dims(a, dim)
    compute = dtypes.float32 if dtypes.is_low_precision(out_dtype) else out_dtype
    total = prims.sum(ew.convert(a, compute), dims)
    n = numel([a.shape[d] for d in dims])
    out = ew.convert(prims.div(total, n), out_dtype)
    return keep_dims(out, a, dims) if keepdim else out


def _minmax(prim, fn_name, a, dim, keepdim):
    if _every_dim(dim):
        check(a.numel() != 0, lambda: f"{fn_name}(): Expected reduction dim to be specified for input.numel() == 0. "
                                      "Specify the reduction dim with the 'dim' argument.")
    else:  # eager checks each dim it is given for emptiness before it checks them for repeats
        for given in tuple(dim) if isinstance(dim, (tuple, list)) else (dim,):
            if isinstance(given, int) and -a.ndim <= given < a.ndim:
                check(a.shape[given] != 0, lambda: f"{fn_name}(): Expected reduction dim {given} to have non-zero "
                      "size.", IndexError)
    dims = reduction_dims(a, dim)
    _check_nonempty(a, dims, fn_name, dim)
    out = prim(a, dims)
    return keep_dims(out, a, dims) if keepdim else out


@torchsymbol(torch.amax, torch.Tensor.amax, method="amax")
def amax(a, dim=(), keepdim=False):
    return _minmax(prims.amax, "amax", a, dim, keepdim)


@torchsymbol(torch.amin, torch.Tensor.amin, method="amin")
def amin(a, dim=(), keepdim=False):
    return _minmax(prims.amin, "amin", a, dim, keepdim)


def _arg(prim, fn_name, a, dim, keepdim):
    if dim is None:
        check(a.numel() != 0, lambda: f"{fn_name}(): Expected reduction dim to be specified for input.numel() == 0.")
        out = prim(a, None)
        return prims.broadcast_in_dim(out, (1,) * a.ndim, ()) if keepdim else out
    (d,) = canonicalize_dims(a.ndim, dim)
    if a.ndim == 0:
        return prim(a, None)
    check(a.shape[d] != 0, lambda: f"{fn_name}(): Expected reduction dim {d} to have non-zero size.", IndexError)
    out = prim(a, d)
    return keep_dims(out, a, (d,)) if keepdim else out


@torchsymbol(torch.argmax, torch.Tensor.argmax, method="argmax")
def argmax(a, dim=None, keepdim=False):
    return _arg(prims.argmax, "argmax", a, dim, keepdim)


@torchsymbol(torch.argmin, torch.Tensor.argmin, method="argmin")
def argmin(a, dim=None, keepdim=False):
    return _arg(prims.argmin, "argmin", a, dim, keepdim)


def _max_or_min(a, dim_or_other, keepdim, *, is_max):
    """torch.max/min: full reduction, (values, indices) along a dim, or the elementwise binary form."""
    if isinstance(dim_or_other, TensorProxy):
        return (ew.maximum if is_max else ew.minimum)(a, dim_or_other)
    name = "max" if is_max else "min"
    if dim_or_other is None:
        check(a.numel() != 0, lambda: f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
              "Specify the reduction dim with the 'dim' argument.")
        return _minmax(prims.amax if is_max else prims.amin, name, a, None, False)
    values = _minmax(prims.amax if is_max else prims.amin, name, a, dim_or_other, keepdim)
    indices = _arg(prims.argmax if is_max else prims.argmin, name, a, dim_or_other, keepdim)
    return (torch.return_types.max if is_max else torch.return_types.min)((values, indices))


@torchsymbol(torch.max, torch.Tensor.max, method="max", name="max")
def max_(a, dim=None, keepdim=False, *, out=None):
    check(out is None, "max(out=...) is not supported", NotImplementedError)
    return _max_or_min(a, dim, keepdim, is_max=True)


@torchsymbol(torch.min, torch.Tensor.min, method="min", name="min")
def min_(a, dim=None, keepdim=False, *, out=None):
    check(out is None, "min(out=...) is not supported", NotImplementedError)
    return _max_or_min(a, dim, keepdim, is_max=False)


def _correction(unbiased, correction):
    check(unbiased is None or correction is None, "var/std: pass only one of unbiased and correction")
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _var(a, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(a, unbiased) overload
        dim, unbiased = None, dim
    check(dtypes.is_float_dtype(a.dtype) or dtypes.is_complex_dtype(a.dtype),
          "std and var only support floating point and complex dtypes")
    dims = reduction_dims(a, dim)
    out_dtype = dtypes.corresponding_real_dtype(a.dtype)
    x = ew.convert(a, dtypes.float32) if dtypes.is_low_precision(a.dtype) else a
    out = ew.convert(prims.var(x, dims, correction=_correction(unbiased, correction)), out_dtype)
    return keep_dims(out, a, dims) if keepdim else out


@torchsymbol(torch.var, torch.Tensor.var, method="var")
def var(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(a, dim, unbiased, keepdim, correction)


@torchsymbol(torch.std, torch.Tensor.std, method="std")
def std(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return ew.sqrt(_var(a, dim, unbiased, keepdim, correction))


@torchsymbol(torch.var_mean, method=())
def var_mean(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v = _var(a, dim, unbiased, keepdim, correction)
    m = mean(a, None if isinstance(dim, bool) else dim, keepdim)
    return v, m


@torchsymbol(torch.std_mean, method=())
def std_mean(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v, m = var_mean(a, dim, unbiased, keepdim, correction=correction)
    return ew.sqrt(v), m


def _any_all(prim, a, dim, keepdim):
    dims = reduction_dims(a, dim)
    nonzero = a if a.dtype is dtypes.bool8 else ew.ne(a, 0)
    # Reduce as int8 so every executor's amax/amin accepts it.
    out = ew.convert(prim(ew.convert(nonzero, dtypes.int8), dims), dtypes.bool8)
    return keep_dims(out, a, dims) if keepdim else out


@torchsymbol(torch.any, torch.Tensor.any, method="any", name="any")
def any_(a, dim=None, keepdim=False):
    return _any_all(prims.amax, a, dim, keepdim)


@torchsymbol(torch.all, torch.Tensor.all, method="all", name="all")
def all_(a, dim=None, keepdim=False):
    return _any_all(prims.amin, a, dim, keepdim)
