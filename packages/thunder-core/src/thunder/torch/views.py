"""More view operations (select, narrow, diagonal, as_strided, unbind) and the out-of-place ``*_scatter``
forms functionalization writes an update of such a view back into its base with."""

from __future__ import annotations

import torch

from thunder.core import prims
from thunder.core.errors import check
from thunder.core.shapes import canonicalize_dim
from thunder.torch.registry import language_symbols, register_method, torchsymbol


def _getitem(a, key):
    return language_symbols["getitem"](a, key)


@torchsymbol(torch.select, torch.Tensor.select, method="select")
def select(a, dim, index):
    dim = canonicalize_dim(a.ndim, dim)
    return _getitem(a, (slice(None),) * dim + (index,))


@torchsymbol(torch.narrow, torch.Tensor.narrow, method="narrow")
def narrow(a, dim, start, length):
    # eager's checks (aten's narrow), which a slice would not make: it clamps (fuzz seed 442139)
    check(a.ndim > 0, "narrow() cannot be applied to a 0-dim tensor.")
    dim = canonicalize_dim(a.ndim, dim)
    check(length >= 0, "narrow(): length must be non-negative.")
    size = a.shape[dim]
    check(-size <= start <= size,
          lambda: f"start out of range (expected to be in range of [{-size}, {size}], but got {start})", IndexError)
    if start < 0:
        start = start + size
    check(start <= size - length, lambda: f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _getitem(a, (slice(None),) * dim + (slice(start, start + length),))


@torchsymbol(torch.unbind, torch.Tensor.unbind, method="unbind")
def unbind(a, dim=0):
    dim = canonicalize_dim(a.ndim, dim)
    return tuple(select(a, dim, i) for i in range(a.shape[dim]))


def _iter(a):
    # over the first dimension, as eager: the rows are views (an in-place update of one reaches ``a``)
    check(a.ndim > 0, "iteration over a 0-d tensor", TypeError)
    return iter(unbind(a, 0))


register_method("__iter__", _iter)
# reversed(x) is x.flip(0) (a copy), or x itself when 0-d
register_method("__reversed__", lambda a: a if a.ndim == 0 else prims.flip(a, (0,)))


@torchsymbol(torch.diagonal, torch.Tensor.diagonal, method="diagonal")
def diagonal(a, offset=0, dim1=0, dim2=1):
    d1, d2 = canonicalize_dim(a.ndim, dim1), canonicalize_dim(a.ndim, dim2)
    check(d1 != d2, lambda: f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = max(min(a.shape[d1] + min(offset, 0), a.shape[d2] - max(offset, 0)), 0)
    shape = [s for i, s in enumerate(a.shape) if i not in (d1, d2)] + [n]
    return a.replace(shape=tuple(shape))  # the torch executor runs torch.diagonal


@torchsymbol(torch.as_strided, torch.Tensor.as_strided, method="as_strided")
def as_strided(a, size, stride, storage_offset=None):
    return a.replace(shape=tuple(size))  # the torch executor runs torch.as_strided


@torchsymbol(torch.diagonal_scatter)
def diagonal_scatter(a, src, offset=0, dim1=0, dim2=1):
    return a.replace()


@torchsymbol(torch.as_strided_scatter)
def as_strided_scatter(a, src, size, stride, storage_offset=None):
    return a.replace()
