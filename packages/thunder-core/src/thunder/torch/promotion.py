"""PyTorch's type promotion, on thunder dtypes and Python numbers.

Categories order bool < integer < float < complex. Within the highest category present, tensors with
dimensions win over zero-dim tensors, which win over Python numbers; a Python number of a higher
category lifts the result to the default dtype of that category (float32 / complex64).
"""

from __future__ import annotations

from enum import Enum

import torch

from thunder.core import dtypes
from thunder.core.proxies import NumberProxy, TensorProxy
from thunder.core.trace import get_tracectx

__all__ = ["Promotion", "result_dtypes", "dtype_of", "can_cast"]


class Promotion(Enum):
    DEFAULT = "default"
    INT_TO_FLOAT = "int_to_float"  # sin, exp, true division: integers compute in float
    ALWAYS_BOOL = "always_bool"  # comparisons
    COMPLEX_TO_FLOAT = "complex_to_float"  # abs
    BOOL_TO_LONG = "bool_to_long"  # sum of bools
    NO_OPMATH = "no_opmath"  # compute in the low-precision dtype itself (shape-like ops)


_CATEGORY = {"bool": 0, "int": 1, "float": 2, "complex": 3}
_PY_CATEGORY = {bool: 0, int: 1, float: 2, complex: 3}

# Promotion lattice within and across categories (int, float), as PyTorch's promoteTypes.
_ORDER_INT = [dtypes.bool8, dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64]


def _category(d) -> int:
    return _PY_CATEGORY[d] if isinstance(d, type) else _CATEGORY[d.kind]


def promote_types(a: dtypes.dtype, b: dtypes.dtype) -> dtypes.dtype:
    if a is b:
        return a
    ca, cb = _category(a), _category(b)
    if ca != cb:
        hi, lo = (a, b) if ca > cb else (b, a)
        if _category(hi) == 3 and _category(lo) == 2:
            # a float widens the complex type: complex64 + float64 -> complex128
            widened = dtypes.corresponding_complex_dtype(lo)
            return hi if hi.bytes >= widened.bytes else widened
        return hi
    if ca == 1:
        if a is dtypes.uint8 or b is dtypes.uint8:
            other = b if a is dtypes.uint8 else a
            return dtypes.int16 if other is dtypes.int8 else other
        return max(a, b, key=_ORDER_INT.index)
    if ca == 2:
        if {a, b} == {dtypes.float16, dtypes.bfloat16}:
            return dtypes.float32
        return max(a, b, key=lambda d: d.bytes)
    if ca == 3:
        return max(a, b, key=lambda d: d.bytes)
    return a


def can_cast(src: dtypes.dtype, dst: dtypes.dtype) -> bool:
    """PyTorch's rule for results written into an existing tensor (in-place ops, ``out=``): never to a lower
    category (float -> integer, complex -> real, anything -> bool)."""
    return _category(src) <= _category(dst)


def dtype_of(x):
    """A tensor's dtype or a number's Python type."""
    if isinstance(x, TensorProxy):
        return x.dtype
    if isinstance(x, NumberProxy):
        return x.python_type
    return type(x)


def default_float_dtype() -> dtypes.dtype:
    """``torch.get_default_dtype()``, read now: the trace then depends on it and its prologue checks it."""
    depends_on_default_dtype()
    return dtypes.to_dtype(torch.get_default_dtype())


def default_complex_dtype() -> dtypes.dtype:
    return dtypes.corresponding_complex_dtype(default_float_dtype())


def depends_on_default_dtype() -> None:
    """What is being traced follows ``torch.set_default_dtype`` (a creation op, a Python float, a PyTorch call
    run on meta tensors): the prologue checks the default dtype."""
    trace = get_tracectx()
    if trace is not None:
        trace.state_reads[torch.get_default_dtype] = torch.get_default_dtype()


_PY_DEFAULT = {bool: lambda: dtypes.bool8, int: lambda: dtypes.int64, float: default_float_dtype,
               complex: default_complex_dtype}


_STATIC_PY_DEFAULT = {bool: dtypes.bool8, int: dtypes.int64, float: dtypes.float32, complex: dtypes.complex64}


def python_number_dtype(t: type) -> dtypes.dtype:
    """The dtype PyTorch gives a Python number of type ``t`` (floats follow the default dtype)."""
    return _PY_DEFAULT[t]()


def _fold(ds):
    out = None
    for d in ds:
        out = d if out is None else promote_types(out, d)
    return out


def _combine(higher, lower):
    """PyTorch's rule for combining the dimensioned, zero-dim and number groups: a lower-priority group
    only counts when its category is higher, and then lifts the higher group's width where it can."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if dtypes.is_complex_dtype(higher):
        return higher
    if dtypes.is_complex_dtype(lower):
        return dtypes.corresponding_complex_dtype(higher) if dtypes.is_float_dtype(higher) else lower
    if dtypes.is_float_dtype(higher):
        return higher
    if dtypes.is_boolean_dtype(higher) or dtypes.is_float_dtype(lower):
        return promote_types(higher, lower)
    return higher


def _promoted(args) -> dtypes.dtype:
    dim_tensors = _fold(a.dtype for a in args if isinstance(a, TensorProxy) and a.ndim > 0)
    zero_dim = _fold(a.dtype for a in args if isinstance(a, TensorProxy) and a.ndim == 0)
    kinds = [dtype_of(a) for a in args if not isinstance(a, TensorProxy) and a is not None]
    tensors = _fold(d for d in (dim_tensors, zero_dim) if d is not None)
    top = max(kinds, key=lambda t: _PY_CATEGORY[t], default=None)
    if top in (float, complex) and (tensors is None or _category(tensors) < _PY_CATEGORY[top]):
        numbers = _fold(python_number_dtype(t) for t in kinds)  # a Python float decides: the default dtype counts
    else:
        numbers = _fold(_STATIC_PY_DEFAULT[t] for t in kinds)  # tensors decide; the numbers' width does not matter
    return _combine(dim_tensors, _combine(zero_dim, numbers))


def result_dtypes(*args, promotion: Promotion = Promotion.DEFAULT):
    """(computation dtype, result dtype) of an elementwise op on ``args`` (tensors, numbers, None)."""
    promoted = _promoted(args)
    if promotion is Promotion.ALWAYS_BOOL:
        return promoted, dtypes.bool8
    if promotion is Promotion.INT_TO_FLOAT and (dtypes.is_integer_dtype(promoted) or dtypes.is_boolean_dtype(promoted)):
        promoted = default_float_dtype()
    if promotion is Promotion.BOOL_TO_LONG and dtypes.is_boolean_dtype(promoted):
        return dtypes.int64, dtypes.int64
    result = promoted
    if promotion is Promotion.COMPLEX_TO_FLOAT:
        result = dtypes.corresponding_real_dtype(promoted)
    computation = promoted
    if promotion is not Promotion.NO_OPMATH and dtypes.is_low_precision(promoted):
        computation = dtypes.float32  # compute half precision in float32, as PyTorch's CPU/CUDA kernels do
    return computation, result
