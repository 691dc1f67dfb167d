"""Gradient rules of the prims (vector-Jacobian products), one entry per prim.

Prims take tensors of one shape and dtype, so their rules need no broadcasting: each rule records
the prim in the forward trace and returns a backward that maps the output's cotangent to the
arguments' gradients. Rules are written with prims so that the backward trace is as analysable as
the forward one (a fusion executor sees plain elementwise ops and reductions).
"""

from __future__ import annotations

import math

from thunder.core import dtypes, prims
from thunder.core.proxies import TensorProxy
from thunder.core.shapes import canonicalize_dim, canonicalize_dims, numel, same_dims
from thunder.grad.registry import needs_grad, register_grad

__all__ = ["zeros_like", "sum_to_shape", "times_two_over"]


def _tensor(x) -> bool:
    return isinstance(x, TensorProxy)


def zeros_like(a: TensorProxy) -> TensorProxy:
    return prims.full(a.shape, 0, device=a.device, dtype=a.dtype)


def _full_like(a: TensorProxy, value) -> TensorProxy:
    return prims.full(a.shape, value, device=a.device, dtype=a.dtype)


def _summed(g, dims) -> list:
    """``dims`` less those of length 1 in ``g``: summing over them is a copy, the reshape after drops them."""
    return [d for d in dims if not (isinstance(g.shape[d], int) and g.shape[d] == 1)]


def sum_to_shape(g: TensorProxy, shape) -> TensorProxy:
    """Sums ``g`` over the dims broadcasting added or expanded, so it has ``shape`` again."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    dims = list(range(lead))
    dims += [lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1]
    dims = _summed(g, dims)
    if dims:
        g = prims.sum(g, tuple(dims))
    return prims.reshape(g, shape) if tuple(g.shape) != shape else g


# ---------------------------------------------------------------------------------------------
# Elementwise unary: d out / d a, from the input ``a`` and the output ``out`` (``out`` only where eager's formula reads
# its result: the tensors a backward saves are eager's, whose versions a caller's in-place update changes)
# ---------------------------------------------------------------------------------------------
_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _erfinv_derivative(a):
    # from erfinv(a) computed again, as eager's (which saves a, not the result)
    e = prims.erfinv(a)
    return prims.mul(prims.exp(prims.mul(e, e)), math.sqrt(math.pi) / 2.0)


_UNARY_DERIVATIVES = {
    "neg": lambda a, out: -1.0,
    "exp": lambda a, out: out,
    "exp2": lambda a, out: prims.mul(out, _LN2),
    "expm1": lambda a, out: prims.add(out, 1.0),
    "log": lambda a, out: prims.reciprocal(a),
    "log1p": lambda a, out: prims.reciprocal(prims.add(a, 1.0)),
    "log2": lambda a, out: prims.reciprocal(prims.mul(a, _LN2)),
    "log10": lambda a, out: prims.reciprocal(prims.mul(a, _LN10)),
    "sin": lambda a, out: prims.cos(a),
    "cos": lambda a, out: prims.neg(prims.sin(a)),
    "tan": lambda a, out: prims.add(prims.mul(out, out), 1.0),
    "asin": lambda a, out: prims.rsqrt(prims.sub(1.0, prims.mul(a, a))),
    "acos": lambda a, out: prims.neg(prims.rsqrt(prims.sub(1.0, prims.mul(a, a)))),
    "atan": lambda a, out: prims.reciprocal(prims.add(prims.mul(a, a), 1.0)),
    "sinh": lambda a, out: prims.cosh(a),
    "cosh": lambda a, out: prims.sinh(a),
    "tanh": lambda a, out: prims.sub(1.0, prims.mul(out, out)),
    "asinh": lambda a, out: prims.rsqrt(prims.add(prims.mul(a, a), 1.0)),
    "acosh": lambda a, out: prims.rsqrt(prims.sub(prims.mul(a, a), 1.0)),
    "atanh": lambda a, out: prims.reciprocal(prims.sub(1.0, prims.mul(a, a))),
    "sqrt": lambda a, out: prims.div(0.5, out),
    "rsqrt": lambda a, out: prims.mul(prims.mul(out, prims.mul(out, out)), -0.5),
    "erf": lambda a, out: prims.mul(prims.exp(prims.neg(prims.mul(a, a))), 2.0 / math.sqrt(math.pi)),
    "erfc": lambda a, out: prims.mul(prims.exp(prims.neg(prims.mul(a, a))), -2.0 / math.sqrt(math.pi)),
    "erfinv": lambda a, out: _erfinv_derivative(a),
    "lgamma": lambda a, out: prims.digamma(a),
    "reciprocal": lambda a, out: prims.neg(prims.mul(out, out)),
    "abs": lambda a, out: prims.sign(a),
}


def _unary_rule(name: str, derivative):
    prim = prims.all_prims[name]

    @register_grad(prim)
    def rule(a):
        out = prim(a)

        def backward(g):
            d = derivative(a, out)
            return (prims.neg(g) if isinstance(d, float) else prims.mul(g, d)),

        return out, backward

    rule.__name__ = f"{name}_grad"
    return rule


for _name, _derivative in _UNARY_DERIVATIVES.items():
    _unary_rule(_name, _derivative)


def _zero_grad_rule(name: str):
    """Piecewise-constant functions: PyTorch gives zero gradients (not None), so must we."""
    prim = prims.all_prims[name]

    @register_grad(prim)
    def rule(*args):
        out = prim(*args)
        return out, lambda g: tuple(zeros_like(a) if _tensor(a) else None for a in args)

    rule.__name__ = f"{name}_grad"


for _name in ("floor", "ceil", "round", "trunc", "sign", "floor_divide"):
    _zero_grad_rule(_name)


# ---------------------------------------------------------------------------------------------
# Elementwise binary
# ---------------------------------------------------------------------------------------------


def _binary_rule(prim, grads):
    """``grads(g, a, b, out) -> (ga, gb)``; an argument that is a number gets None."""

    @register_grad(prim)
    def rule(a, b):
        out = prim(a, b)

        def backward(g):
            ga, gb = grads(g, a, b, out)
            return (ga() if _tensor(a) else None), (gb() if _tensor(b) else None)

        return out, backward

    rule.__name__ = f"{prim.name}_grad"


_binary_rule(prims.add, lambda g, a, b, out: (lambda: g, lambda: g))
_binary_rule(prims.sub, lambda g, a, b, out: (lambda: g, lambda: prims.neg(g)))
_binary_rule(prims.mul, lambda g, a, b, out: (lambda: prims.mul(g, b), lambda: prims.mul(g, a)))
# the divisor's from a and b, not the result, as eager's (which saves the inputs): a caller updating the result in
# place before the backward does not make the backward fail
_binary_rule(prims.div, lambda g, a, b, out: (lambda: prims.div(g, b),
                                              lambda: prims.neg(prims.mul(g, prims.div(prims.div(a, b), b)))))


def _atan2_grads(g, a, b, out):
    # g * b / (a^2 + b^2) and -g * a / (a^2 + b^2), 0 where the denominator is 0 (PyTorch gives 0 at the origin)
    def recip():
        denom = prims.add(prims.mul(a, a), prims.mul(b, b))
        return prims.where(prims.eq(denom, 0.0), 0.0, prims.reciprocal(denom))

    return (lambda: prims.mul(prims.mul(g, b), recip()), lambda: prims.mul(prims.neg(prims.mul(g, a)), recip()))


_binary_rule(prims.atan2, _atan2_grads)
_binary_rule(prims.fmod, lambda g, a, b, out: (lambda: g, lambda: prims.neg(prims.mul(g, prims.trunc(prims.div(a, b))))))
_binary_rule(prims.remainder, lambda g, a, b, out: (
    lambda: g, lambda: prims.neg(prims.mul(g, prims.floor(prims.div(a, b))))))


def _pow_grads(g, a, b, out):
    def ga():
        # b * a**(b - 1), and 0 where b == 0 (PyTorch's convention, also for a == 0, where the formula is 0 * inf)
        if not _tensor(b) and b == 0:
            return zeros_like(g)
        d = prims.mul(b, prims.pow(a, prims.sub(b, 1.0)))
        if _tensor(b):
            d = prims.where(prims.eq(b, 0.0), 0.0, d)
        return prims.mul(g, d)

    def gb():
        # out * log(a), and 0 where a == 0 and b >= 0
        if not _tensor(a):  # a number base: its log is a number (log(0) = -inf, log of a negative = nan)
            log_a = math.log(a) if a > 0 else (-math.inf if a == 0 else math.nan)
            d = prims.mul(out, log_a)
            if a == 0:
                d = prims.where(prims.ge(b, 0.0), 0.0, d)
            return prims.mul(g, d)
        d = prims.mul(out, prims.log(a))
        return prims.mul(g, prims.where(prims.bitwise_and(prims.eq(a, 0.0), prims.ge(b, 0.0)), 0.0, d))

    return ga, gb


_binary_rule(prims.pow, _pow_grads)


def _extremum_grads(loses):
    """PyTorch's maximum/minimum backward: ties share the gradient equally; the loser gets 0 by a select, not a
    product with a 0/1 mask, so a nan or inf gradient does not reach it; a nan input (no loser) gets all of it."""

    def grads(g, a, b, out):
        def share(x, y):
            return lambda: prims.where(loses(x, y), 0.0, prims.where(prims.eq(x, y), prims.mul(g, 0.5), g))

        return share(a, b), share(b, a)

    return grads


_binary_rule(prims.maximum, _extremum_grads(prims.lt))
_binary_rule(prims.minimum, _extremum_grads(prims.gt))


@register_grad(prims.where)
def _where_grad(pred, a, b):
    out = prims.where(pred, a, b)

    def backward(g):
        return (None, prims.where(pred, g, 0.0) if _tensor(a) else None,
                prims.where(pred, 0.0, g) if _tensor(b) else None)

    return out, backward


@register_grad(prims.convert_element_type)
def _convert_element_type_grad(a, dtype):
    out = prims.convert_element_type(a, dtype)

    def backward(g):
        if not (dtypes.is_float_dtype(a.dtype) or dtypes.is_complex_dtype(a.dtype)):
            return None, None
        return prims.convert_element_type(g, a.dtype), None

    return out, backward


@register_grad(prims.device_put)
def _device_put_grad(a, device):
    return prims.device_put(a, device), lambda g: (prims.device_put(g, a.device), None)


# ---------------------------------------------------------------------------------------------
# Shape operations
# ---------------------------------------------------------------------------------------------


@register_grad(prims.broadcast_in_dim)
def _broadcast_in_dim_grad(a, shape, broadcast_dimensions):
    out = prims.broadcast_in_dim(a, shape, broadcast_dimensions)

    def backward(g):
        kept = set(broadcast_dimensions)
        dims = [d for d in range(len(shape)) if d not in kept]
        dims += [bd for i, bd in enumerate(broadcast_dimensions)
                 if a.shape[i] is not shape[bd] and a.shape[i] == 1 and shape[bd] != 1]
        dims = _summed(g, dims)
        r = prims.sum(g, tuple(sorted(dims))) if dims else g
        return (r if same_dims(r.shape, a.shape) else prims.reshape(r, a.shape)), None, None

    return out, backward


@register_grad(prims.reshape)
def _reshape_grad(a, shape):
    return prims.reshape(a, shape), lambda g: (prims.reshape(g, a.shape), None)


@register_grad(prims.transpose)
def _transpose_grad(a, permutation):
    inverse = tuple(sorted(range(len(permutation)), key=lambda i: permutation[i]))
    return prims.transpose(a, permutation), lambda g: (prims.transpose(g, inverse), None)


@register_grad(prims.squeeze)
def _squeeze_grad(a, dims):
    return prims.squeeze(a, dims), lambda g: (prims.reshape(g, a.shape), None)


@register_grad(prims.flip)
def _flip_grad(a, dims):
    return prims.flip(a, dims), lambda g: (prims.flip(g, dims), None)


@register_grad(prims.slice)
def _slice_grad(a, start_indices, end_indices, strides=None):
    out = prims.slice(a, start_indices, end_indices, strides)

    def backward(g):
        # put g back where it was read: zero blocks around each sliced dim, an index_add for strided ones
        for dim in range(a.ndim):
            step = 1 if strides is None else strides[dim]
            start, size = start_indices[dim], a.shape[dim]
            if step == 1:
                before, after = start, size - end_indices[dim]
                parts = []
                for amount, part in ((before, None), (None, g), (after, None)):
                    if part is not None:
                        parts.append(part)
                    elif type(amount) is not int or amount != 0:  # a symbolic size: the block, maybe empty
                        shape = list(g.shape)
                        shape[dim] = amount
                        parts.append(prims.full(tuple(shape), 0, device=g.device, dtype=g.dtype))
                g = prims.cat(parts, dim) if len(parts) > 1 else g
            else:
                index = prims.iota(g.shape[dim], start=start, step=step, device=g.device, dtype=dtypes.int64)
                shape = list(g.shape)
                shape[dim] = size
                zeros = prims.full(tuple(shape), 0, device=g.device, dtype=g.dtype)
                g = prims.index_add(zeros, dim, index, g)
        return g, None, None, None

    return out, backward


@register_grad(prims.cat)
def _cat_grad(tensors, dim):
    out = prims.cat(tensors, dim)

    def backward(g):
        d = canonicalize_dim(out.ndim, dim)
        grads, offset = [], 0
        for t in tensors:
            start = [0] * g.ndim
            end = list(g.shape)
            start[d], end[d] = offset, offset + t.shape[d]
            offset = offset + t.shape[d]
            grads.append(prims.slice(g, tuple(start), tuple(end)))
        return grads, None

    return out, backward


# ---------------------------------------------------------------------------------------------
# Gathers and scatters
# ---------------------------------------------------------------------------------------------


@register_grad(prims.take)
def _take_grad(a, indices, dim):
    out = prims.take(a, indices, dim)

    def backward(g):
        index = prims.reshape(indices, (1,)) if indices.ndim == 0 else indices
        return prims.index_add(zeros_like(a), canonicalize_dim(a.ndim, dim), index, g), None, None

    return out, backward


@register_grad(prims.take_along_axis)
def _take_along_axis_grad(a, indices, dim):
    out = prims.take_along_axis(a, indices, dim)

    def backward(g):
        # take_along_axis (torch.take_along_dim) reads negative indices from the end; scatter_add does not
        d = canonicalize_dim(a.ndim, dim)
        index = prims.where(prims.lt(indices, 0), prims.add(indices, a.shape[d]), indices)
        return prims.scatter_add(zeros_like(a), d, index, g), None, None

    return out, backward


@register_grad(prims.index)
def _index_grad(a, indices):
    out = prims.index(a, indices)
    return out, lambda g: (prims.index_put(zeros_like(a), indices, g, True), None)


@register_grad(prims.index_add)
def _index_add_grad(a, dim, index, source):
    out = prims.index_add(a, dim, index, source)
    return out, lambda g: (g if _tensor(a) else None, None, None, prims.take(g, index, dim) if _tensor(source) else None)


@register_grad(prims.scatter_add)
def _scatter_add_grad(a, dim, index, source):
    out = prims.scatter_add(a, dim, index, source)
    return out, lambda g: (g, None, None, prims.take_along_axis(g, index, dim) if _tensor(source) else None)


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


def _unreduce(g, a, dims):
    """``g`` of a reduction over ``dims`` broadcast back to ``a``'s shape."""
    dims = set(canonicalize_dims(a.ndim, dims))
    return prims.broadcast_in_dim(g, a.shape, tuple(d for d in range(a.ndim) if d not in dims))


@register_grad(prims.sum)
def _sum_grad(a, dims):
    return prims.sum(a, dims), lambda g: (_unreduce(g, a, dims), None)


@register_grad(prims.prod)
def _prod_grad(a, dims):
    out = prims.prod(a, dims)

    def backward(g):
        # product of the other elements: out / a where a != 0 (the result read, as eager's backward saves it); with
        # a zero, the product of the rest is computed without dividing (one zero) or is zero (several)
        zero = prims.eq(a, 0.0)
        safe = prims.where(zero, 1.0, a)
        prod_nonzero = _unreduce(prims.prod(safe, dims), a, dims)
        zeros = _unreduce(prims.sum(prims.convert_element_type(zero, a.dtype), dims), a, dims)
        others = prims.where(zero, prims.where(prims.eq(zeros, 1.0), prod_nonzero, 0.0),
                             prims.where(prims.eq(zeros, 0.0), prims.div(_unreduce(out, a, dims), safe), 0.0))
        return prims.mul(_unreduce(g, a, dims), others), None

    return out, backward


def _extremum_reduction_grad(prim):
    @register_grad(prim)
    def rule(a, dims):
        out = prim(a, dims)

        def backward(g):
            # ties share the gradient equally, as PyTorch's amax/amin do
            mask = prims.convert_element_type(prims.eq(a, _unreduce(out, a, dims)), g.dtype)
            count = _unreduce(prims.sum(mask, dims), a, dims)
            return prims.mul(prims.div(_unreduce(g, a, dims), count), mask), None

        return out, backward

    rule.__name__ = f"{prim.name}_grad"


_extremum_reduction_grad(prims.amax)
_extremum_reduction_grad(prims.amin)


def times_two_over(x: TensorProxy, dof) -> TensorProxy:
    """``x * (2 / dof)``, var's gradient scale; no degrees of freedom (dof <= 0) gives eager's inf (nan where x is
    0). A symbolic ``dof`` may be 0 at run time, so it divides the tensor rather than the number 2."""
    if not isinstance(dof, int):
        return prims.div(prims.mul(x, 2.0), dof)
    return prims.mul(x, 2.0 / dof if dof > 0 else float("inf"))


@register_grad(prims.var)
def _var_grad(a, dims, *, correction):
    out = prims.var(a, dims, correction=correction)

    def backward(g):
        n = 1
        for d in canonicalize_dims(a.ndim, dims):
            n = n * a.shape[d]
        mean = _unreduce(prims.div(prims.sum(a, dims), n), a, dims)
        dof = n - correction
        return times_two_over(prims.mul(_unreduce(g, a, dims), prims.sub(a, mean)), dof), None

    return out, backward


# ---------------------------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------------------------


def _mT(x):
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return prims.transpose(x, tuple(perm))


@register_grad(prims.matmul)
def _matmul_grad(a, b):
    out = prims.matmul(a, b)
    # a batch of matrices times one matrix (or vector) that requires grad: eager folds the batch into the rows of one
    # mm (mv), so b's gradient is one mm of the folded a and cotangent, not a batched product summed over the batch
    # (which makes a [batch, k, n] temporary and rounds differently)
    folded = a.ndim >= 3 and b.ndim <= 2 and needs_grad(b)

    def backward(g):
        if folded:
            rows = numel(a.shape[:-1])
            g2 = prims.reshape(g, (rows, b.shape[-1]) if b.ndim == 2 else (rows,))
            gb = prims.matmul(_mT(prims.reshape(a, (rows, a.shape[-1]))), g2)
            ga = prims.matmul(g, _mT(b)) if b.ndim == 2 else _outer(g, b)
            return ga, gb
        if a.ndim == 1 and b.ndim == 1:
            return prims.mul(prims.broadcast_in_dim(g, a.shape, ()), b), prims.mul(prims.broadcast_in_dim(g, b.shape, ()), a)
        a2 = prims.reshape(a, (1, a.shape[0])) if a.ndim == 1 else a
        b2 = prims.reshape(b, (b.shape[0], 1)) if b.ndim == 1 else b
        g2 = g
        if a.ndim == 1:
            g2 = prims.reshape(g2, tuple(g.shape[:-1]) + (1, g.shape[-1]) if b.ndim > 1 else (1,))
        if b.ndim == 1:
            g2 = prims.reshape(g2, tuple(g2.shape) + (1,))
        ga = sum_to_shape(prims.matmul(g2, _mT(b2)), a2.shape) if g2.ndim >= 2 and b2.ndim >= 2 else None
        gb = sum_to_shape(prims.matmul(_mT(a2), g2), b2.shape)
        return prims.reshape(ga, a.shape), prims.reshape(gb, b.shape)

    return out, backward


def _outer(g, v):
    """``g[..., None] * v``: the gradient of a batch of matrices times vector ``v``."""
    shape = tuple(g.shape) + (v.shape[0],)
    return prims.mul(prims.broadcast_in_dim(g, shape, tuple(range(g.ndim))), prims.broadcast_in_dim(v, shape, (g.ndim,)))


@register_grad(prims.linear)
def _linear_grad(a, w, bias):
    out = prims.linear(a, w, bias)

    def backward(g):
        if w.ndim == 1:  # out = a @ w + bias, one output feature
            gw_in = prims.broadcast_in_dim(g, a.shape, tuple(range(g.ndim)))
            ga = prims.mul(gw_in, prims.broadcast_in_dim(w, a.shape, (a.ndim - 1,)))
            gw = prims.sum(prims.mul(gw_in, a), tuple(range(a.ndim - 1))) if a.ndim > 1 else prims.mul(gw_in, a)
            gbias = (sum_to_shape(g, bias.shape) if g.ndim else g) if _tensor(bias) else None
            return ga, gw, gbias
        ga = prims.matmul(g, w)
        # gw = sum over batch of g^T a: flatten the batch dims (a 1-D input is a batch of one)
        g2 = prims.reshape(g, (numel(g.shape[:-1]), g.shape[-1])) if g.ndim != 2 else g
        a2 = prims.reshape(a, (numel(a.shape[:-1]), a.shape[-1])) if a.ndim != 2 else a
        gw = prims.matmul(_mT(g2), a2)
        gbias = None
        if _tensor(bias):
            gbias = prims.sum(g, tuple(range(g.ndim - 1))) if g.ndim > 1 else g
        return ga, gw, gbias

    return out, backward
