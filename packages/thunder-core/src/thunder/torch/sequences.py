"""Operations along a dimension of a sequence: differences and cumulative sums."""

from __future__ import annotations

import torch

from thunder.core import dtypes, prims
from thunder.core.errors import check
from thunder.core.shapes import canonicalize_dim
from thunder.torch import elementwise as ew
from thunder.torch.registry import language_symbols, register_method, torchsymbol


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


@torchsymbol(torch.cumsum, torch.Tensor.cumsum, method="cumsum")
def cumsum(a, dim, *, dtype=None):
    canonicalize_dim(a.ndim, dim)
    if dtype is not None:
        out_dtype = dtypes.to_dtype(dtype)
    elif dtypes.is_integer_dtype(a.dtype) or dtypes.is_boolean_dtype(a.dtype):
        out_dtype = dtypes.int64  # as torch.cumsum: integers and bools accumulate in int64
    else:
        out_dtype = a.dtype
    # the torch executor runs torch.cumsum; there is no scan prim yet to decompose into
    return a.replace(dtype=out_dtype)


# Python's unary operators on tensors
for _method, _symbol in (("__neg__", "neg"), ("__abs__", "abs"), ("__invert__", "bitwise_not")):
    register_method(_method, language_symbols[_symbol])
register_method("__pos__", lambda a: a)


@torchsymbol(torch.nn.functional.pad)
def pad(a, pad, mode="constant", value=None):
    """Constant padding (negative amounts crop); other modes run as one opaque PyTorch call."""
    if mode != "constant":
        from thunder.torch.opaque import call_opaque

        return call_opaque(torch.nn.functional.pad, (a, pad), {"mode": mode, "value": value})
    check(len(pad) % 2 == 0 and len(pad) // 2 <= a.ndim, "Padding length must be divisible by 2 and at most twice the "
          "number of dimensions of the input", RuntimeError)
    fill = 0 if value is None else value
    for i in range(len(pad) // 2):
        dim = a.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        if before < 0 or after < 0:
            start = -before if before < 0 else 0
            stop = a.shape[dim] + after if after < 0 else a.shape[dim]
            a = _along(a, dim, slice(start, stop))
            before, after = max(before, 0), max(after, 0)
        blocks = []
        for amount in (before, after):
            shape = list(a.shape)
            shape[dim] = amount
            blocks.append(prims.full(tuple(shape), fill, device=a.device, dtype=a.dtype) if amount else None)
        parts = [p for p in (blocks[0], a, blocks[1]) if p is not None]
        if len(parts) > 1:
            a = prims.cat(parts, dim)
    return a
