"""Fused gradient rules of torch-language symbols.

Without a rule, a torch-language symbol is differentiated through its decomposition, so its forward
runs as the decomposition's prims. A rule here keeps the forward one call (``torch.softmax``) and
writes the backward with the formula PyTorch uses, saving what that formula needs.
"""

from __future__ import annotations

import inspect
import math

import torch

from thunder import torch as ltorch
from thunder.core import dtypes, prims
from thunder.core.proxies import TensorProxy
from thunder.core.shapes import canonicalize_dim, numel, same_dims
from thunder.grad.prim_rules import sum_to_shape, times_two_over
from thunder.grad.registry import register_grad, register_nondifferentiable, register_saved_as_view, register_saved_by_eager
from thunder.torch.opaque import OPAQUE_ID_PREFIX, display_name, opaque_symbol

__all__ = []

# ``detach`` and ``.data`` are aliases autograd does not track
register_nondifferentiable(ltorch.detach, ltorch.inplace.data)
# random tensors shaped like their input read only its metadata (eager: requires_grad=False); the composites
# (full_like, zeros_like...) need no entry, their decompositions read no input data
register_nondifferentiable(ltorch.rand_like, ltorch.randn_like, ltorch.randint_like, ltorch.multinomial)
# what eager's node saves beyond what the gradient reads (torch's derivatives.yaml: gather_backward(grad, self, ...),
# index_add's grad.index_select(...).expand_as(source))
register_saved_by_eager(ltorch.gather, "a")
register_saved_by_eager(ltorch.take_along_dim, "a")
register_saved_by_eager(ltorch.index_add, "source")
# what eager's node saves as a view of an argument (linear's mm / addmm save mat2 = weight.t())
register_saved_as_view(ltorch.linear, "weight", lambda w: w.mT if w.ndim == 2 else w)


def _derivative_not_implemented(sym, op_name):
    """Ops whose derivative eager leaves unimplemented: their values require grad as eager's do, and a backward
    reaching them raises eager's error when it runs."""

    @register_grad(sym)
    def rule(a, *args, **kwargs):
        def backward(g, *other_cotangents):
            return {"a": prims.derivative_not_implemented(g, a, op_name)}

        return sym(a, *args, **kwargs), backward


_derivative_not_implemented(ltorch.unique_sized, "_unique2")
_derivative_not_implemented(ltorch.unique_consecutive_sized, "unique_consecutive")


@register_grad(ltorch.floor_divide)
def _floor_divide_grad(a, b):
    # eager's floor_divide has no derivative (its result requires grad, a backward reaching it raises); div with
    # rounding_mode="floor", the same prim, has zero gradients
    def backward(g):
        g = prims.raise_in_backward(g, "derivative for aten::floor_divide is not implemented")
        # zeros read from g, so the raise stays (a backward of an output the loss does not use gets them)
        return {name: _to_arg(ltorch.mul(g, 0.0), x) for name, x in (("a", a), ("b", b)) if _tensor(x)}

    return ltorch.floor_divide(a, b), backward


def _tensor(x) -> bool:
    return isinstance(x, TensorProxy)


def _cast(x, dtype):
    return x if x.dtype is dtype else prims.convert_element_type(x, dtype)


@register_grad(ltorch.linear)
def _linear_grad(input, weight, bias=None):
    out = ltorch.linear(input, weight, bias)

    def backward(g):
        if weight.ndim == 2:
            grads = {"input": ltorch.matmul(g, weight)}
            # sizes from the forward's proxies: the cotangent's may be numbers made inside a backward decomposition
            # (a cat's summed size), which the dispatched backward does not define
            g2 = ltorch.reshape(g, (-1, weight.shape[0])) if g.ndim != 2 else g
            x2 = ltorch.reshape(input, (-1, input.shape[-1])) if input.ndim != 2 else input
            grads["weight"] = ltorch.matmul(ltorch.t(g2), x2)
        else:  # one output feature: out = (input * weight).sum(-1)
            grads = {"input": ltorch.mul(ltorch.unsqueeze(g, -1), weight)}
            grads["weight"] = ltorch.sum(ltorch.mul(ltorch.unsqueeze(g, -1), input), tuple(range(input.ndim - 1))) \
                if input.ndim > 1 else ltorch.mul(g, input)
        if _tensor(bias):
            grads["bias"] = ltorch.sum(g, tuple(range(g.ndim - bias.ndim))) if g.ndim > bias.ndim else g
        return grads

    return out, backward


@register_grad(ltorch.softmax)
def _softmax_grad(a, dim, dtype=None):
    out = ltorch.softmax(a, dim, dtype=dtype)

    def backward(g):
        # y * (g - sum(g * y)) in this order, as PyTorch's kernel computes it, in the output's dtype
        ga = ltorch.mul(out, ltorch.sub(g, ltorch.sum(ltorch.mul(g, out), dim, keepdim=True)))
        return {"a": _cast(ga, a.dtype)}

    return out, backward


@register_grad(ltorch.log_softmax)
def _log_softmax_grad(a, dim, dtype=None):
    out = ltorch.log_softmax(a, dim, dtype=dtype)

    def backward(g):
        ga = ltorch.sub(g, ltorch.mul(ltorch.exp(out), ltorch.sum(g, dim, keepdim=True)))
        return {"a": _cast(ga, a.dtype)}

    return out, backward


# ---------------------------------------------------------------------------------------------
# Helpers: broadcasting back to an argument, dtypes
# ---------------------------------------------------------------------------------------------


def _to_arg(g, x):
    """A gradient computed at the output's (broadcast) shape and dtype, summed back to argument ``x``."""
    return _cast(sum_to_shape(g, x.shape), x.dtype)


def _compute_dtype(x):
    return dtypes.float32 if dtypes.is_low_precision(x.dtype) else x.dtype


def _zeros(shape, like):
    return prims.full(tuple(shape), 0, device=like.device, dtype=like.dtype)


def _fused(sym):
    """``@_fused(ltorch.x)`` on ``backward_of(out, **arguments) -> backward``: the rule records ``sym`` called
    exactly as the program called it (the torch executor runs that call as written) and hands the backward
    the arguments by name, defaults filled in."""
    signature = inspect.signature(sym.meta)

    def decorator(backward_of):
        @register_grad(sym)
        def rule(*args, **kwargs):
            out = sym(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return out, backward_of(out, **bound.arguments)

        rule.__name__ = backward_of.__name__
        return rule

    return decorator


# ---------------------------------------------------------------------------------------------
# Symbols the torch executor runs whole, with no decomposition to differentiate
# ---------------------------------------------------------------------------------------------


@_fused(ltorch.clone)
def _clone_grad(out, a, memory_format=None):
    return lambda g: {"a": g}


@_fused(ltorch.cumsum)
def _cumsum_grad(out, a, dim, dtype=None):
    def backward(g):
        # a reversed cumulative sum, in the input's dtype (as PyTorch: the cotangent is cast first)
        g = _cast(g, a.dtype)
        if a.ndim == 0:
            return {"a": g}
        d = canonicalize_dim(a.ndim, dim)
        return {"a": prims.flip(ltorch.cumsum(prims.flip(g, (d,)), d), (d,))}

    return backward


@_fused(ltorch.diagonal)
def _diagonal_grad(out, a, offset=0, dim1=0, dim2=1):
    return lambda g: {"a": ltorch.diagonal_scatter(_zeros(a.shape, a), g, offset, dim1, dim2)}


@_fused(ltorch.diagonal_scatter)
def _diagonal_scatter_grad(out, a, src, offset=0, dim1=0, dim2=1):
    def backward(g):
        return {"a": ltorch.diagonal_scatter(g, _zeros(src.shape, g), offset, dim1, dim2) if _tensor(a) else None,
                "src": ltorch.diagonal(g, offset, dim1, dim2) if _tensor(src) else None}

    return backward


def _selected(g, dim, index, shape):
    """``g``'s slices at ``index`` along ``dim`` (index_select), shaped like the source they came from."""
    rows = prims.take(g, index, canonicalize_dim(g.ndim, dim) if g.ndim else 0) if g.ndim else g
    return rows if same_dims(rows.shape, shape) else prims.reshape(rows, tuple(shape))


@_fused(ltorch.index_add)
def _index_add_grad(out, a, dim, index, source, alpha=1):
    def backward(g):
        gs = _selected(g, dim, index, source.shape) if _tensor(source) else None
        if gs is not None and alpha != 1:
            gs = prims.mul(gs, alpha)
        return {"a": g, "source": gs}

    return backward


@_fused(ltorch.index_copy)
def _index_copy_grad(out, a, dim, index, source):
    def backward(g):
        # the copied-over slices of a get nothing; the source gets the slices it was copied to (each, with
        # repeated indices too, as PyTorch)
        return {"a": ltorch.index_copy(g, dim, index, _zeros(source.shape, g)),
                "source": _selected(g, dim, index, source.shape) if _tensor(source) else None}

    return backward


def _gathered(g, dim, index, src, op):
    if tuple(index.shape) != tuple(src.shape):
        # PyTorch's backward gives an index-shaped gradient here and autograd rejects it
        raise RuntimeError(f"Function {op}Backward0 returned an invalid gradient at index 1 - got "
                           f"{list(index.shape)} but expected shape compatible with {list(src.shape)}")
    return ltorch.gather(g, dim, index)


@_fused(ltorch.scatter)
def _scatter_grad(out, a, dim, index, src=None, value=None, reduce=None):
    def backward(g):
        if reduce is not None:
            raise NotImplementedError("derivative for aten::scatter is not implemented")  # PyTorch's words
        return {"a": ltorch.scatter(g, dim, index, value=0),
                "src": _gathered(g, dim, index, src, "Scatter") if _tensor(src) else None}

    return backward


@_fused(ltorch.scatter_add)
def _scatter_add_grad(out, a, dim, index, src):
    return lambda g: {"a": g, "src": _gathered(g, dim, index, src, "ScatterAdd") if _tensor(src) else None}


def _pieces_grad(out, a, dim=0, **split_arg):
    # the pieces tile ``a`` along ``dim`` in order: the gradient is their cotangents joined (one cat, as eager),
    # not one zero-padded copy of ``a`` per piece
    return lambda *gs: {"a": ltorch.cat(list(gs), canonicalize_dim(a.ndim, dim))}


_fused(ltorch.split)(_pieces_grad)
_fused(ltorch.chunk)(_pieces_grad)


# ---------------------------------------------------------------------------------------------
# Elementwise and reductions where the decomposition's gradient is not PyTorch's
# ---------------------------------------------------------------------------------------------


@_fused(ltorch.clamp)
def _clamp_grad(out, a, min=None, max=None):
    # The decomposition with tensor bounds is maximum/minimum, which split the gradient at ties; PyTorch's
    # clamp passes it to the input wherever min <= a <= max (bounds included), to a bound where it is active.
    def backward(g):
        zero = 0.0
        if min is not None and max is not None:
            pa = ltorch.bitwise_and(ltorch.ge(a, min), ltorch.le(a, max))
            pmin = ltorch.bitwise_and(ltorch.lt(a, min), ltorch.lt(min, max)) if _tensor(min) else None
            pmax = ltorch.bitwise_or(ltorch.gt(a, max), ltorch.lt(max, min)) if _tensor(max) else None
        elif min is not None:
            pa, pmin, pmax = ltorch.ge(a, min), (ltorch.lt(a, min) if _tensor(min) else None), None
        else:
            pa, pmin, pmax = ltorch.le(a, max), None, (ltorch.gt(a, max) if _tensor(max) else None)
        grads = {"a": _to_arg(ltorch.where(pa, g, zero), a)}
        if pmin is not None:
            grads["min"] = _to_arg(ltorch.where(pmin, g, zero), min)
        if pmax is not None:
            grads["max"] = _to_arg(ltorch.where(pmax, g, zero), max)
        return grads

    return backward


def _extremum_rule(sym, binary):
    """torch.max/min: the gradient of (values, indices) along a dim goes to the returned index only (PyTorch's
    ``value_selecting_reduction_backward``); the full reduction and the binary form share it among ties."""

    @_fused(sym)
    def rule(result, a, dim=None, keepdim=False, out=None):
        def backward(g, *rest):
            if _tensor(dim):  # maximum/minimum: ties share the gradient, the loser gets 0 (selected, as in eager:
                other = dim  # a nan gradient does not reach it)

                def share(x, y):
                    return ltorch.where(binary(y, x), 0.0, ltorch.where(ltorch.eq(x, y), ltorch.mul(g, 0.5), g))

                return {"a": _to_arg(share(a, other), a), "dim": _to_arg(share(other, a), other)}
            if dim is None:  # full reduction: ties (the nans, for a nan result) share the gradient; 0 elsewhere,
                # selected as eager's CPU kernel does (masked_fill), so a nan gradient stays on the extremum
                mask = ltorch.where(ltorch.isnan(result), ltorch.isnan(a), ltorch.eq(a, result))
                return {"a": ltorch.where(mask, ltorch.div(g, ltorch.sum(_cast(mask, g.dtype))), 0.0)}
            values, indices = result
            if a.ndim == 0:
                return {"a": g}
            d = canonicalize_dim(a.ndim, dim)
            if not keepdim:
                g, indices = ltorch.unsqueeze(g, d), ltorch.unsqueeze(indices, d)
            return {"a": prims.scatter_add(_zeros(a.shape, g), d, indices, g)}

        return backward


_extremum_rule(ltorch.max, ltorch.gt)
_extremum_rule(ltorch.min, ltorch.lt)


def _selecting_along_dim(fn, dim_position: int) -> None:
    """A torch op with no torch-language symbol yet (run as one opaque call) returning (values, indices) of elements
    picked along ``dim`` (``topk``, ``sort``): the values' cotangent goes back to the positions picked, scattered into
    zeros (PyTorch's ``value_selecting_reduction_backward``). Without a rule the op is differentiated by PyTorch's
    autograd run inside the trace (grad/torch_island.py), one more engine call per backward: MoE routers call topk
    on every step."""

    @register_grad(f"{OPAQUE_ID_PREFIX}{display_name(fn)}")
    def rule(*args, **kwargs):
        out = opaque_symbol(fn)(*args, **kwargs)
        a = args[0]
        dim = args[dim_position] if len(args) > dim_position else kwargs.get("dim", -1)

        def backward(g, *rest):
            if a.ndim == 0:
                return (g,)
            d = canonicalize_dim(a.ndim, dim)
            return (prims.scatter_add(_zeros(a.shape, g), d, out[1], g),)

        return out, backward


for _fn, _dim_position in ((torch.topk, 2), (torch.Tensor.topk, 2), (torch.sort, 1), (torch.Tensor.sort, 1)):
    _selecting_along_dim(_fn, _dim_position)


@_fused(ltorch.sigmoid)
def _sigmoid_grad(out, a):
    # PyTorch's sigmoid_backward, g * y * (1 - y) from the output: the decomposition 1 / (1 + exp(-a)) gives
    # nan where exp(-a) overflows, and its forward rounds differently from torch.sigmoid
    return lambda g: {"a": ltorch.mul(g, ltorch.mul(out, ltorch.sub(1.0, out)))}


@_fused(ltorch.lerp)
def _lerp_grad(out, a, end, weight):
    # PyTorch's lerp backward, g * (1 - w) for the start: the decomposition's g - w * g is inf - inf (nan) where
    # the cotangent is infinite
    def backward(g):
        rest = 1 - weight if not _tensor(weight) else ltorch.sub(1, weight)
        grads = {"a": _to_arg(ltorch.mul(g, rest), a) if _tensor(a) else None,
                 "end": _to_arg(ltorch.mul(g, weight), end) if _tensor(end) else None,
                 "weight": _to_arg(ltorch.mul(g, ltorch.sub(end, a)), weight) if _tensor(weight) else None}
        return {name: grad for name, grad in grads.items() if grad is not None}

    return backward


def _std_backward(g_std, std, a, dim, unbiased, keepdim, correction):
    """var's gradient of ``g_std / (2 std)``, zero where std is 0 (PyTorch's std_backward; sqrt's derivative
    at 0 is infinite)."""
    from thunder.torch.reductions import _correction, reduction_dims

    if isinstance(dim, bool):  # std(a, unbiased) overload
        dim, unbiased = None, dim
    dims = reduction_dims(a, dim)
    n = 1
    for d in dims:
        n = n * a.shape[d]
    cdt = _compute_dtype(a)
    x, g, s = _cast(a, cdt), _cast(g_std, cdt), _cast(std, cdt)
    gv = ltorch.where(ltorch.eq(s, 0.0), 0.0, ltorch.div(g, ltorch.mul(s, 2.0)))
    if not keepdim:
        gv = prims.reshape(gv, tuple(1 if i in dims else size for i, size in enumerate(a.shape)))
    centered = ltorch.sub(x, ltorch.mean(x, dims, keepdim=True))
    dof = n - _correction(unbiased, correction)
    return times_two_over(ltorch.mul(gv, centered), dof), dims, n, cdt


@_fused(ltorch.std)
def _std_grad(out, a, dim=None, unbiased=None, keepdim=False, correction=None):
    def backward(g):
        ga = _std_backward(g, out, a, dim, unbiased, keepdim, correction)[0]
        return {"a": _cast(ga, a.dtype)}

    return backward


@_fused(ltorch.std_mean)
def _std_mean_grad(out, a, dim=None, unbiased=None, keepdim=False, correction=None):
    def backward(g_std, g_mean):
        ga, dims, n, cdt = _std_backward(g_std, out[0], a, dim, unbiased, keepdim, correction)
        gm = _cast(g_mean, cdt)
        if not keepdim:
            gm = prims.reshape(gm, tuple(1 if i in dims else size for i, size in enumerate(a.shape)))
        return {"a": _cast(ltorch.add(ga, ltorch.div(gm, n)), a.dtype)}

    return backward


# ---------------------------------------------------------------------------------------------
# Embedding
# ---------------------------------------------------------------------------------------------


@_fused(ltorch.embedding)
def _embedding_grad(out, input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                    sparse=False):
    # the forward is one gather; the weight's gradient accumulates the rows of the cotangent at their indices
    # (a dense gradient, also for sparse=True), except at padding_idx (PyTorch's embedding_dense_backward)
    def backward(g):
        n, d = weight.shape
        idx = prims.reshape(input, (numel(input.shape),)) if input.ndim != 1 else input
        rows = prims.reshape(g, (idx.shape[0], d))
        if scale_grad_by_freq:
            ones = prims.full((idx.shape[0],), 1, device=g.device, dtype=g.dtype)
            counts = prims.index_add(_zeros((n,), g), 0, idx, ones)
            rows = prims.div(rows, prims.broadcast_in_dim(prims.take(counts, idx, 0), rows.shape, (0,)))
        if padding_idx is not None:
            pad = padding_idx + n if padding_idx < 0 else padding_idx
            keep = prims.broadcast_in_dim(prims.ne(idx, pad), rows.shape, (0,))
            rows = prims.where(keep, rows, 0.0)
        return {"weight": prims.index_add(_zeros(weight.shape, weight), 0, idx, rows)}

    return backward


# ---------------------------------------------------------------------------------------------
# Normalizations: PyTorch's backward formulas, the statistics recomputed from the input
# ---------------------------------------------------------------------------------------------


def _norm_backward(x, g, weight, dims, rstd, xhat, center: bool):
    """Gradients of ``y = xhat * weight`` (``xhat = (x - mean) * rstd`` if ``center`` else ``x * rstd``) for
    input and weight, in the compute dtype; ``dims`` are the normalized dims."""
    gxhat = ltorch.mul(g, _cast(weight, g.dtype)) if _tensor(weight) else g
    proj = ltorch.mean(ltorch.mul(gxhat, xhat), dims, keepdim=True)
    inner = ltorch.sub(gxhat, ltorch.mul(xhat, proj))
    if center:
        inner = ltorch.sub(inner, ltorch.mean(gxhat, dims, keepdim=True))
    gx = ltorch.mul(inner, rstd)
    batch = tuple(range(x.ndim - len(dims)))
    gw = None
    if _tensor(weight):
        gw = ltorch.mul(g, xhat)
        gw = _cast(ltorch.sum(gw, batch) if batch else gw, weight.dtype)
    return gx, gw


def _normalized(input, normalized_shape):
    n = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    return tuple(range(input.ndim - n, input.ndim))


@_fused(ltorch.layer_norm)
def _layer_norm_grad(out, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    def backward(g):
        dims = _normalized(input, normalized_shape)
        cdt = _compute_dtype(input)
        x, gc = _cast(input, cdt), _cast(g, cdt)
        mean = ltorch.mean(x, dims, keepdim=True)
        var = ltorch.var(x, dims, keepdim=True, correction=0)
        rstd = ltorch.rsqrt(ltorch.add(var, eps))
        xhat = ltorch.mul(ltorch.sub(x, mean), rstd)
        gx, gw = _norm_backward(x, gc, weight, dims, rstd, xhat, center=True)
        gb = None
        if _tensor(bias):
            batch = tuple(range(input.ndim - len(dims)))
            gb = _cast(ltorch.sum(gc, batch) if batch else gc, bias.dtype)
        return {"input": _cast(gx, input.dtype), "weight": gw, "bias": gb}

    return backward


@_fused(ltorch.rms_norm)
def _rms_norm_grad(out, input, normalized_shape, weight=None, eps=None):
    def backward(g):
        import torch

        dims = _normalized(input, normalized_shape)
        e = torch.finfo(dtypes.to_torch_dtype(input.dtype)).eps if eps is None else eps
        cdt = _compute_dtype(input)
        x, gc = _cast(input, cdt), _cast(g, cdt)
        rstd = ltorch.rsqrt(ltorch.add(ltorch.mean(ltorch.mul(x, x), dims, keepdim=True), e))
        xhat = ltorch.mul(x, rstd)
        gx, gw = _norm_backward(x, gc, weight, dims, rstd, xhat, center=False)
        return {"input": _cast(gx, input.dtype), "weight": gw}

    return backward


# ---------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------


def _mT(x):
    return ltorch.transpose(x, -2, -1)


def _group_heads(x, hk, n):
    """(..., hk * n, S, E) -> (..., hk, S, E): the gradient of a key/value repeated n times per head (GQA)."""
    *batch, _, s, e = x.shape
    return ltorch.sum(prims.reshape(x, (*batch, hk, n, s, e)), x.ndim - 2)


@_fused(ltorch.scaled_dot_product_attention)
def _sdpa_grad(out, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    # The forward stays one attention call (dropout_p > 0 is thunder.torch.randomness's symbol, run by PyTorch
    # under its own autograd). The backward recomputes the attention weights from query and key (one matmul,
    # nothing of size L x S saved) and applies softmax's backward, in float32 for low-precision inputs.
    def backward(g):
        from thunder.torch.indexing import tri_mask

        cdt = _compute_dtype(query)
        q, k, v, gc = (_cast(x, cdt) for x in (query, key, value, g))
        n = query.shape[-3] // key.shape[-3] if enable_gqa else 1
        if n != 1:
            k, v = _repeat(k, n), _repeat(v, n)
        s = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
        scores = ltorch.mul(ltorch.matmul(q, _mT(k)), s)
        L, S = query.shape[-2], key.shape[-2]
        if is_causal:
            scores = ltorch.where(tri_mask(L, S, 0, query.device, lower=True), scores, -math.inf)
        if attn_mask is not None:
            if attn_mask.dtype is dtypes.bool8:
                scores = ltorch.where(attn_mask, scores, -math.inf)
            else:
                scores = ltorch.add(scores, _cast(attn_mask, cdt))
        p = ltorch.softmax(scores, -1)
        if attn_mask is not None:  # a fully masked row attends to nothing: zeros, as PyTorch's kernels give
            p = ltorch.where(ltorch.eq(ltorch.amax(scores, -1, keepdim=True), -math.inf), 0.0, p)
        gv = ltorch.matmul(_mT(p), gc)
        gp = ltorch.matmul(gc, _mT(v))
        gs = ltorch.mul(p, ltorch.sub(gp, ltorch.sum(ltorch.mul(gp, p), -1, keepdim=True)))
        gq = ltorch.mul(ltorch.matmul(gs, k), s)
        gk = ltorch.mul(ltorch.matmul(_mT(gs), q), s)
        if n != 1:
            gk, gv = _group_heads(gk, key.shape[-3], n), _group_heads(gv, key.shape[-3], n)
        grads = {"query": _to_arg(gq, query), "key": _to_arg(gk, key), "value": _to_arg(gv, value)}
        if _tensor(attn_mask) and dtypes.is_float_dtype(attn_mask.dtype):
            grads["attn_mask"] = _to_arg(gs, attn_mask)
        return grads

    return backward


def _repeat(x, n):
    """(..., H, S, E) -> (..., H * n, S, E), each head repeated n times in place (repeat_interleave)."""
    *batch, h, s, e = x.shape
    expanded = prims.broadcast_in_dim(x, (*batch, h, n, s, e), tuple(i for i in range(x.ndim + 1) if i != x.ndim - 2))
    return prims.reshape(expanded, (*batch, h * n, s, e))
