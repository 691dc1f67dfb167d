"""Shape helpers. Shape entries are ``int`` or ``IntegerProxy``; everything here works on both."""

from __future__ import annotations

from thunder.core.errors import check

__all__ = ["canonicalize_dim", "canonicalize_dims", "numel", "broadcast_shapes", "is_shape", "normalize_shape_arg",
           "as_ints"]


def canonicalize_dim(rank: int, dim: int, wrap_scalar: bool = True) -> int:
    """A dim in [-rank, rank) -> [0, rank); a 0-d tensor accepts dims -1 and 0, as in PyTorch."""
    bound = max(rank, 1) if wrap_scalar else rank
    dim = _specialized(dim)
    check(
        -bound <= dim < bound,
        lambda: f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})",
        IndexError,
    )
    return dim + bound if dim < 0 else dim


def _specialized(dim):
    """A dim computed from a symbolic number (``x.sum(n % x.dim())``) picks the dims the trace reduces, so its
    value is fixed: a constraint the prologue checks (another value gets its own trace)."""
    from thunder.core.proxies import IntegerProxy

    return dim.__index__() if isinstance(dim, IntegerProxy) else dim


def canonicalize_dims(rank: int, dims) -> tuple[int, ...]:
    dims = _specialized(dims)
    if isinstance(dims, int):
        dims = (dims,)
    return tuple(canonicalize_dim(rank, d) for d in dims)


def as_ints(shape) -> list:
    """A shape (or list of dims) as eager prints it in messages: the values of symbolic sizes, not proxies."""
    from thunder.core.proxies import pyval

    return [pyval(d) for d in shape]


def numel(shape):
    n = 1
    for d in shape:
        n = n * d
    return n


def is_shape(x) -> bool:
    from thunder.core.proxies import IntegerProxy

    return isinstance(x, (tuple, list)) and all(isinstance(d, (int, IntegerProxy)) and not isinstance(d, bool) for d in x)


def normalize_shape_arg(shape) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` both mean shape (2, 3), as in torch.reshape/view/expand/zeros."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(shape)


def broadcast_shapes(*shapes) -> tuple:
    """The broadcast of the shapes, with PyTorch's error for incompatible ones: shapes are combined left to
    right, each pair from its last dim backwards, and a mismatch names the dim of that pair's result."""
    shapes = [s for s in shapes if s is not None]
    if not shapes:
        return ()
    out = list(shapes[0])
    for s in shapes[1:]:
        rank = max(len(out), len(s))
        out = [1] * (rank - len(out)) + out
        for j in reversed(range(rank)):
            i = j - (rank - len(s))
            if i < 0:
                continue
            d = s[i]
            if d == 1:
                continue
            if out[j] == 1:
                out[j] = d
            else:
                check(
                    d == out[j],
                    lambda: f"The size of tensor a ({out[j]}) must match the size of tensor b ({d}) "
                    f"at non-singleton dimension {j}",
                )
    return tuple(out)
