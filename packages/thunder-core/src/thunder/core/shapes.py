"""Shape helpers. Shape entries are ``int`` or ``IntegerProxy``; everything here works on both."""

from __future__ import annotations

import operator

from thunder.core.errors import check

__all__ = ["canonicalize_dim", "canonicalize_dims", "numel", "broadcast_shapes", "is_shape", "normalize_shape_arg",
           "as_ints"]


def canonicalize_dim(rank: int, dim: int, wrap_scalar: bool = True) -> int:
    """A dim in [-rank, rank) -> [0, rank); a 0-d tensor accepts dims -1 and 0, as in PyTorch. A dim decides the
    result's layout, so a symbolic one (a module's ``self.dim`` under symbolic values) is taken by value: the
    trace is constrained to it (``x.sum(n % x.dim())`` with a symbolic ``n`` too; another value gets its own
    trace)."""
    dim = operator.index(dim)
    bound = max(rank, 1) if wrap_scalar else rank
    check(
        -bound <= dim < bound,
        lambda: f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], but got {dim})",
        IndexError,
    )
    return dim + bound if dim < 0 else dim


def canonicalize_dims(rank: int, dims) -> tuple[int, ...]:
    if not isinstance(dims, (tuple, list)):
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


def same_dims(a, b) -> bool:
    """Whether two shapes are the same by construction: the same size objects or equal ints. For skipping a
    no-op reshape: comparing sizes with == would record a constraint (under symbolic values, a new program
    whenever two unrelated sizes happen to be equal), and the reshape it skips costs a view when unsure."""
    return len(a) == len(b) and all(x is y or (type(x) is int and type(y) is int and x == y) for x, y in zip(a, b))


def broadcast_shapes(*shapes) -> tuple:
    """The broadcast of the shapes, with PyTorch's error for incompatible ones: operands are taken in order, each
    against the broadcast of those before it, dimensions from the last one (PyTorch's first error is ours)."""
    shapes = [s for s in shapes if s is not None]
    if not shapes:
        return ()
    out = tuple(shapes[0])
    for s in shapes[1:]:
        out = _broadcast_pair(out, tuple(s))
    return out


def _broadcast_pair(a: tuple, b: tuple) -> tuple:
    rank = max(len(a), len(b))
    out = [1] * rank
    for i in reversed(range(rank)):
        size_a = a[i - rank + len(a)] if i - rank + len(a) >= 0 else 1
        size_b = b[i - rank + len(b)] if i - rank + len(b) >= 0 else 1
        if size_a is size_b:  # one size (a symbolic one too): nothing to ask, so no constraint recorded
            out[i] = size_a
        elif size_a == 1:
            out[i] = size_b
        elif size_b == 1:
            out[i] = size_a
        else:
            check(size_a == size_b, lambda: f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) "
                  f"at non-singleton dimension {i}")
            out[i] = size_a
    return tuple(out)
