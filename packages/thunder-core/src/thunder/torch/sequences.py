"""Operations along a dimension of a sequence: differences."""

from __future__ import annotations

import torch

from thunder.core import dtypes
from thunder.core.shapes import canonicalize_dim
from thunder.torch import elementwise as ew
from thunder.torch.registry import language_symbols, torchsymbol


def _along(a, dim, s: slice):
    return language_symbols["getitem"](a, (slice(None),) * dim + (s,))


@torchsymbol(torch.diff, torch.Tensor.diff, method="diff")
def diff(a, n=1, dim=-1, prepend=None, append=None):
    dim = canonicalize_dim(a.ndim, dim)
    parts = [p for p in (prepend, a, append) if p is not None]
    if len(parts) > 1:
        a = language_symbols["cat"](parts, dim)
    for _ in range(n):
        later, earlier = _along(a, dim, slice(1, None)), _along(a, dim, slice(None, -1))
        a = ew.ne(later, earlier) if dtypes.is_boolean_dtype(a.dtype) else ew.sub(later, earlier)
    return a
