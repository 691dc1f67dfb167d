"""Eager's errors for matrix products, in eager's words and order.

``torch.matmul`` reports its errors from the kernel it lowers to (aten ``_matmul_impl``): ``dot``, ``mv``, ``mm``
of the larger operand with its batch folded into rows, or ``bmm`` over the broadcast batch. Which one depends on
the ranks, on whether the smaller operand requires grad, and on whether the larger one's batch can be folded
without a copy (its strides); each kernel checks sizes and dtypes in its own order and words. The plan below
mirrors that dispatch on plain sizes and flags; it runs only when a product is invalid, so a valid program's
trace asks nothing about strides or requires_grad.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from thunder.core.dtypes import cpp_name
from thunder.core.dtypes import torch_scalar_name as scalar_name
from thunder.core.errors import UnsupportedError, check, user_location_suffix
from thunder.core.proxies import TensorProxy, pyval
from thunder.core.shapes import broadcast_shapes
from thunder.core.trace import get_tracectx

__all__ = ["check_matmul", "check_mm", "check_bmm", "check_linear"]


class _Operand(NamedTuple):
    """What eager's dispatch looks at: sizes, dtype, requires_grad, strides (None: not known to the jit)."""

    shape: tuple
    dtype: object
    requires_grad: bool
    strides: tuple | None


def _operand(p: TensorProxy) -> _Operand:
    layouts = get_tracectx().layouts
    strides = layouts.strides(p) if layouts is not None else None
    return _Operand(tuple(pyval(d) for d in p.shape), p.dtype, bool(p.requires_grad), strides)


def _mT(x: _Operand) -> _Operand:
    swap = lambda t: None if t is None else (*t[:-2], t[-1], t[-2])  # noqa: E731
    return _Operand(swap(x.shape), x.dtype, x.requires_grad, swap(x.strides))


# each kernel's checks, in its order: sizes (rows x k, k2 x cols) and dtypes of its operands
def _dot(a, b, da, db):
    check(da is db, lambda: f"dot : expected both vectors to have same dtype, but found {scalar_name(da)} and "
          f"{scalar_name(db)}")
    check(a[0] == b[0], lambda: f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the "
          f"same number of elements, but got {a[0]} and {b[0]} elements respectively")


def _mv(m, v, dm, dv):
    check(m[1] == v[0], lambda: f"size mismatch, got input ({m[0]}), mat ({m[0]}x{m[1]}), vec ({v[0]})")
    check(dm is dv, lambda: f"addmv input tensors must have the same dtype, but got {scalar_name(dv)}, "
          f"{scalar_name(dm)}, and {scalar_name(dv)}")


def _mm(a, b, da, db):
    check(a[1] == b[0], lambda: f"mat1 and mat2 shapes cannot be multiplied ({a[0]}x{a[1]} and {b[0]}x{b[1]})")
    check(da is db, lambda: f"expected m1 and m2 to have the same dtype, but got: {cpp_name(da)} != {cpp_name(db)}")


def _bmm(a, b, da, db):
    check(b[0] == a[0] and b[1] == a[2], lambda: f"Expected size for first two dimensions of batch2 tensor to be: "
          f"[{a[0]}, {a[2]}] but got: [{b[0]}, {b[1]}].")
    if math.prod((a[0], a[1], b[2])) == 0 or a[2] == 0:
        _refuse_empty(da, db)  # eager returns zeros without looking at the dtypes
    check(da is db, lambda: f"expected scalar type {scalar_name(da)} but found {scalar_name(db)}")


def _refuse_empty(da, db) -> None:
    if da is not db:
        raise UnsupportedError(
            f"a batched matrix product of {da.name} and {db.name} tensors with nothing to sum{user_location_suffix()}: "
            "eager returns zeros there without checking the dtypes, thunder.jit does not; convert one operand")


def _should_fold(a: _Operand, b: _Operand) -> bool:
    """aten's should_fold: mm/mv of the larger operand with its batch folded into rows, instead of bmm."""
    a_larger = len(a.shape) >= len(b.shape)
    t1 = a if a_larger else _mT(b)
    small = b if a_larger else a
    if not (len(t1.shape) >= 3 and len(small.shape) <= 2):
        return False
    if small.requires_grad:  # eager folds (copying if need be) to keep the smaller operand's gradient small
        return True
    if len(a.shape) == 2:  # folding would transpose the result and copy it
        return False
    if math.prod(t1.shape) == 0:
        return True
    if t1.strides is None:  # unknown layout: the trace treats it as contiguous
        return True
    return all(t1.strides[i] == t1.strides[i + 1] * t1.shape[i + 1] for i in range(len(t1.shape) - 2))


def _matmul_checks(a: _Operand, b: _Operand) -> None:
    da, db = len(a.shape), len(b.shape)
    if da == 1 and db == 1:
        return _dot(a.shape, b.shape, a.dtype, b.dtype)
    if da == 2 and db == 1:
        return _mv(a.shape, b.shape, a.dtype, b.dtype)
    if da <= 2 and db == 2:
        return _mm(a.shape if da == 2 else (1, *a.shape), b.shape, a.dtype, b.dtype)
    if _should_fold(a, b):
        transpose = db > da
        t1 = _mT(b) if transpose else a
        t2 = (_mT(a) if da == 2 else a) if transpose else b
        folded = (math.prod(t1.shape[:-1]), t1.shape[-1])
        kernel = _mm if len(t2.shape) == 2 else _mv
        return kernel(folded, t2.shape, t1.dtype, t2.dtype)
    if da == 3 and db == 3 and a.shape[0] != b.shape[0]:
        # eager drops a batch of one that requires grad, and dispatches again
        squeeze = lambda x: _Operand(x.shape[1:], x.dtype, x.requires_grad, x.strides and x.strides[1:])  # noqa: E731
        if a.shape[0] == 1 and a.requires_grad:
            return _matmul_checks(squeeze(a), b)
        if b.shape[0] == 1 and b.requires_grad:
            return _matmul_checks(a, squeeze(b))
    batch = math.prod(broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    n, m1 = (a.shape[-2] if da > 1 else 1), a.shape[-1]
    m2, p = (b.shape[-2], b.shape[-1]) if db > 1 else (b.shape[0], 1)
    return _bmm((batch, n, m1), (batch, m2, p), a.dtype, b.dtype)


def _inner_sizes(a, b):
    return a.shape[-1], (b.shape[0] if b.ndim == 1 else b.shape[-2])


def check_matmul(a: TensorProxy, b: TensorProxy) -> None:
    """Raise eager's error for ``torch.matmul(a, b)`` where the dtypes or inner sizes do not fit."""
    ka, kb = _inner_sizes(a, b)
    if a.dtype is not b.dtype or ka != kb:
        _matmul_checks(_operand(a), _operand(b))


def check_mm(a: TensorProxy, b: TensorProxy) -> None:
    if a.dtype is not b.dtype or a.shape[1] != b.shape[0]:
        _mm(tuple(pyval(d) for d in a.shape), tuple(pyval(d) for d in b.shape), a.dtype, b.dtype)


def check_bmm(a: TensorProxy, b: TensorProxy) -> None:
    if a.dtype is not b.dtype or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        _bmm(tuple(pyval(d) for d in a.shape), tuple(pyval(d) for d in b.shape), a.dtype, b.dtype)


def check_linear(x: TensorProxy, w: TensorProxy, bias: TensorProxy | None) -> None:
    """Eager's dtype errors for ``F.linear``: a dot for two vectors, an addmm when there is a bias (the bias
    against the weight, then the input against it), else the matmul of the input with the weight transposed."""
    if x.dtype is w.dtype and (bias is None or bias.dtype is w.dtype or (x.ndim == 1 and w.ndim == 1)):
        return
    if x.ndim == 1 and w.ndim == 1:
        return _dot(tuple(pyval(d) for d in x.shape), tuple(pyval(d) for d in w.shape), x.dtype, w.dtype)
    if bias is not None:
        check(bias.dtype is w.dtype, lambda: f"self and mat2 must have the same dtype, but got {scalar_name(bias.dtype)} "
              f"and {scalar_name(w.dtype)}")
        check(x.dtype is w.dtype, lambda: f"mat1 and mat2 must have the same dtype, but got {scalar_name(x.dtype)} and "
              f"{scalar_name(w.dtype)}")
    _matmul_checks(_operand(x), _mT(_operand(w)) if w.ndim == 2 else _operand(w))
