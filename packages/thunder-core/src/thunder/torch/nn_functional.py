"""torch.nn.functional: activations, softmax, normalization, embedding, attention, cross entropy (dropout: randomness).

Where a torch.nn.functional Python function passes bookkeeping arguments through ``__torch_function__``
(``_stacklevel``, ``inplace``), a small adapter drops them so traces record the canonical call.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from thunder.core import dtypes, prims
from thunder.core.errors import check
from thunder.core.proxies import torch_function_table
from thunder.core.shapes import as_ints, canonicalize_dim, numel
from thunder.grad.registry import register_nondifferentiable
from thunder.torch import elementwise as ew
from thunder.torch import indexing, reductions, shape_ops
from thunder.torch.linalg import matmul
from thunder.torch.registry import torchsymbol


def _adapter(fn, *torch_fns):
    for tf in torch_fns:
        torch_function_table[tf] = fn


def _no_inplace(inplace, name):
    check(not inplace, lambda: f"{name}(inplace=True) is not supported by thunder; use the out-of-place form",
          NotImplementedError)


def _compute_dtype(a):
    return dtypes.float32 if dtypes.is_low_precision(a.dtype) else a.dtype


def _check_float(a, kernel):
    check(dtypes.is_float_dtype(a.dtype) or dtypes.is_complex_dtype(a.dtype),
          lambda: f'"{kernel}" not implemented for \'{dtypes.torch_scalar_name(a.dtype)}\'', NotImplementedError)


# ---------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------


@torchsymbol(torch.relu, torch.Tensor.relu, method="relu")
def relu(a):
    check(not dtypes.is_boolean_dtype(a.dtype), "Boolean inputs not supported for relu")
    # le + where (not maximum) so NaN propagates as in PyTorch
    return ew.where(ew.le(a, 0), 0, a)


def _relu_adapter(input, inplace=False):
    _no_inplace(inplace, "relu")
    return relu(input)


_adapter(_relu_adapter, F.relu)


@torchsymbol(F.gelu, method=())
def gelu(a, approximate="none"):
    check(approximate in ("none", "tanh"), "approximate argument must be either none or tanh.")
    _check_float(a, "GeluKernelImpl")
    x = ew.convert(a, _compute_dtype(a))
    if approximate == "none":
        inner = ew.add(ew.erf(ew.mul(x, 1 / math.sqrt(2))), 1)
    else:
        cube = ew.mul(ew.mul(x, x), x)
        inner = ew.add(ew.tanh(ew.mul(ew.add(x, ew.mul(cube, 0.044715)), math.sqrt(2 / math.pi))), 1)
    return ew.convert(ew.mul(ew.mul(x, 0.5), inner), a.dtype)


@torchsymbol(method=())
def silu(a):
    _check_float(a, "silu_cuda" if a.device.type == "cuda" else "silu_cpu")  # the kernel eager names
    x = ew.convert(a, _compute_dtype(a))
    return ew.convert(ew.mul(x, ew.sigmoid(x)), a.dtype)


def _silu_adapter(input, inplace=False):
    _no_inplace(inplace, "silu")
    return silu(input)


_adapter(_silu_adapter, F.silu)


# ---------------------------------------------------------------------------------------------
# Softmax
# ---------------------------------------------------------------------------------------------


def _softmax_input(a, dim, dtype, kernel):
    """``kernel``: eager's kernel for a softmax over the last dim (another dim runs another kernel), whose name is in
    eager's error for a dtype it does not implement; eager raises it only where a kernel runs, not for an empty
    tensor."""
    if dtype is not None:
        a = ew.convert(a, dtypes.to_dtype(dtype))
    if not (dtypes.is_float_dtype(a.dtype) or dtypes.is_complex_dtype(a.dtype)) and numel(a.shape) != 0:
        last = a.ndim == 0 or canonicalize_dim(a.ndim, dim) == a.ndim - 1
        _check_float(a, f"{kernel}_lastdim_kernel_impl" if last else f"{kernel}_kernel_impl")
    return a, ew.convert(a, _compute_dtype(a))


def _shift(x, dim):
    """The max along ``dim``, which softmax subtracts so that exp cannot overflow. A tensor with no elements along
    ``dim`` has nothing to shift (and amax of an empty dim raises, where eager's softmax returns the empty tensor);
    a symbolic size of ``dim`` is compared with 0, which the compiled program then checks."""
    if x.ndim > 0 and x.shape[canonicalize_dim(x.ndim, dim)] == 0:
        return 0
    return reductions.amax(x, dim, True)


@torchsymbol(torch.softmax, torch.Tensor.softmax, method="softmax")
def softmax(a, dim, dtype=None):
    a, x = _softmax_input(a, dim, dtype, "softmax")
    e = ew.exp(ew.sub(x, _shift(x, dim)))
    return ew.convert(ew.div(e, reductions.sum(e, dim, True)), a.dtype)


@torchsymbol(torch.log_softmax, torch.Tensor.log_softmax, method="log_softmax")
def log_softmax(a, dim, dtype=None):
    a, x = _softmax_input(a, dim, dtype, "log_softmax")
    shifted = ew.sub(x, _shift(x, dim))
    lse = ew.log(reductions.sum(ew.exp(shifted), dim, True))
    return ew.convert(ew.sub(shifted, lse), a.dtype)


def _softmax_adapter(sym):
    def adapter(input, dim=None, _stacklevel=3, dtype=None):
        check(dim is not None, lambda: f"{sym.name}() without dim is deprecated and not supported; pass dim",
              NotImplementedError)
        return sym(input, dim) if dtype is None else sym(input, dim, dtype=dtype)

    return adapter


_adapter(_softmax_adapter(softmax), F.softmax)
_adapter(_softmax_adapter(log_softmax), F.log_softmax)


# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------


def _normalized_dims(a, normalized_shape, name):
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = len(ns)
    check(n >= 1 and a.ndim >= n and tuple(a.shape[a.ndim - n:]) == ns,
          lambda: f"Given normalized_shape={as_ints(ns)}, expected input with shape [*, {', '.join(map(str, ns))}], but got "
          f"input of size{as_ints(a.shape)}")
    return tuple(range(a.ndim - n, a.ndim))


@torchsymbol(F.layer_norm, torch.layer_norm, method=())
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = _normalized_dims(input, normalized_shape, "layer_norm")
    x = ew.convert(input, _compute_dtype(input))
    mean = reductions.mean(x, dims, True)
    var = reductions.var(x, dims, keepdim=True, correction=0)
    out = ew.mul(ew.sub(x, mean), ew.rsqrt(ew.add(var, eps)))
    if weight is not None:
        out = ew.mul(out, weight)
    if bias is not None:
        out = ew.add(out, bias)
    return ew.convert(out, input.dtype)


@torchsymbol(F.rms_norm, torch.rms_norm, method=())
def rms_norm(input, normalized_shape, weight=None, eps=None):
    dims = _normalized_dims(input, normalized_shape, "rms_norm")
    if eps is None:
        eps = torch.finfo(dtypes.to_torch_dtype(input.dtype)).eps
    x = ew.convert(input, _compute_dtype(input))
    out = ew.mul(x, ew.rsqrt(ew.add(reductions.mean(ew.mul(x, x), dims, True), eps)))
    if weight is not None:
        out = ew.mul(out, weight)
    return ew.convert(out, input.dtype)


# ---------------------------------------------------------------------------------------------
# Embedding
# ---------------------------------------------------------------------------------------------


def _legacy_type_name(a) -> str:
    """``torch.FloatTensor``, ``torch.cuda.LongTensor``: the name some argument checks print (``Tensor.type()``)."""
    device = "" if a.device.type == "cpu" else f"{a.device.type}."
    return f"torch.{device}{dtypes.torch_scalar_name(a.dtype)}Tensor"


@torchsymbol(F.embedding, method=())
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    # max_norm's renormalization is done before this symbol (_embedding_call), as eager's F.embedding does
    check(input.dtype in (dtypes.int64, dtypes.int32), lambda: f"Expected tensor for argument #1 'indices' to have one "
          f"of the following scalar types: Long, Int; but got {_legacy_type_name(input)} instead (while checking arguments "
          "for embedding)")
    check(weight.ndim == 2, "'weight' must be 2-D")
    # padding_idx only affects the gradient
    flat = shape_ops.reshape(input, -1)
    rows = prims.take(weight, flat, 0)
    return shape_ops.reshape(rows, tuple(input.shape) + (weight.shape[1],))


@torchsymbol(name="embedding_renorm")
def embedding_renorm(weight, input, max_norm, norm_type):
    """``weight`` with the rows ``input`` names scaled to a norm of at most ``max_norm``: the out-of-place form of
    ``torch.embedding_renorm_``, which eager's ``F.embedding(max_norm=...)`` runs on the weight under no_grad."""
    check(weight.ndim == 2, "'weight' must be 2-D")
    return weight.replace(requires_grad=False)


def _embedding_call(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                    sparse=False):
    if max_norm is not None:
        # eager updates the weight in place, unseen by autograd: later reads (this lookup, the caller) see it
        prims.copy_(embedding_renorm(weight, input, max_norm, norm_type), out=weight, grad_enabled=False)
    return embedding(input, weight, padding_idx, None, norm_type, scale_grad_by_freq, sparse)


torch_function_table[F.embedding] = _embedding_call
register_nondifferentiable(embedding_renorm)


# dropout is in thunder.torch.randomness


# ---------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------


def _repeat_heads(x, n):
    """(..., H, S, E) -> (..., H * n, S, E), each head repeated n times in place (repeat_interleave)."""
    if n == 1:
        return x
    *batch, h, s, e = x.shape
    expanded = prims.broadcast_in_dim(x, (*batch, h, n, s, e), tuple(i for i in range(x.ndim + 1) if i != x.ndim - 2))
    return shape_ops.reshape(expanded, (*batch, h * n, s, e))


# With dropout_p > 0 (training BERT, GPT-2), F.scaled_dot_product_attention is the random symbol of
# thunder.torch.randomness instead, which runs as PyTorch's own call (same seed, same dropout mask).
@torchsymbol(method=())
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    check(query.dtype is key.dtype is value.dtype, lambda: f"Expected query, key, and value to have the same dtype, "
          f"but got query.dtype: {dtypes.cpp_name(query.dtype)} key.dtype: {dtypes.cpp_name(key.dtype)} and value.dtype: "
          f"{dtypes.cpp_name(value.dtype)} instead.")
    check(dropout_p == 0.0, "thunder.torch.scaled_dot_product_attention has no dropout; "
          "torch.nn.functional.scaled_dot_product_attention with dropout_p > 0 is thunder.torch.randomness's",
          NotImplementedError)
    _check_float(query, "scaled_dot_product_attention")
    if enable_gqa:
        hq, hk = query.shape[-3], key.shape[-3]
        check(hq % hk == 0, lambda: f"number of heads in key/value ({hk}) must divide those of query ({hq})")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hk)
    L, S = query.shape[-2], key.shape[-2]
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = ew.mul(matmul(query, shape_ops.transpose(key, -2, -1)), scale)
    if is_causal:  # combines with attn_mask, as PyTorch does
        scores = ew.where(indexing.tri_mask(L, S, 0, query.device, lower=True), scores, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype is dtypes.bool8:
            scores = ew.where(attn_mask, scores, -math.inf)
        else:
            scores = ew.add(scores, attn_mask)
    return matmul(softmax(scores, -1), value)


# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------


def _reduce(loss, reduction, denominator=None):
    if reduction == "none":
        return loss
    total = reductions.sum(loss)
    if reduction == "sum":
        return total
    return ew.div(total, denominator) if denominator is not None else reductions.mean(loss)


def _weight_along(weight, ndim, class_dim):
    """The per-class weight shaped to broadcast along ``class_dim`` of an ``ndim``-d tensor."""
    shape = tuple(weight.shape[0] if i == class_dim else 1 for i in range(ndim))
    return shape_ops.reshape(weight, shape)


@torchsymbol(F.cross_entropy, method=())
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    if size_average is not None or reduce is not None:
        reduction = torch.nn._reduction.legacy_get_string(size_average, reduce, emit_warning=False)
    check(reduction in ("none", "mean", "sum"), lambda: f"{reduction} is not a valid value for reduction", ValueError)
    check(0.0 <= label_smoothing <= 1.0, lambda: f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 1 if input.ndim >= 2 else 0
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim)
    if target.dtype is not dtypes.int64 and target.dtype is not dtypes.uint8:
        check(dtypes.is_float_dtype(target.dtype), lambda: f"expected target dtype to be Long or Byte, but got "
              f"{target.dtype.name.capitalize()}")
        return _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim, n_classes)
    if input.ndim >= 2:
        check(input.shape[0] == target.shape[0], lambda: f"Expected input batch_size ({input.shape[0]}) to match target "
              f"batch_size ({target.shape[0]}).", ValueError)
    expected = tuple(input.shape[:class_dim]) + tuple(input.shape[class_dim + 1:])
    check(tuple(target.shape) == expected, lambda: f"Expected target size {as_ints(expected)}, got {as_ints(target.shape)}")

    keep = ew.ne(target, ignore_index)
    safe_target = ew.where(keep, target, 0)  # ignored entries may be out of range
    picked = indexing.gather(logp, class_dim, shape_ops.unsqueeze(safe_target, class_dim))
    nll = ew.neg(shape_ops.squeeze(picked, class_dim))
    if weight is not None:
        w = shape_ops.reshape(indexing.index_select(weight, 0, shape_ops.reshape(safe_target, -1)), target.shape)
        w = ew.where(keep, w, 0)
        nll = ew.mul(nll, w)
        denominator = reductions.sum(w)
    else:
        w = None
        denominator = reductions.sum(keep, dtype=logp.dtype)
    nll = ew.where(keep, nll, 0)
    loss = _reduce(nll, reduction, denominator)
    if label_smoothing == 0.0:
        return loss
    weighted = logp if weight is None else ew.mul(logp, _weight_along(weight, logp.ndim, class_dim))
    smooth = ew.where(keep, ew.neg(reductions.sum(weighted, class_dim)), 0)
    smooth = _reduce(smooth, reduction, denominator)
    return ew.add(ew.mul(loss, 1 - label_smoothing), ew.mul(smooth, label_smoothing / n_classes))


def _cross_entropy_probs(logp, target, weight, reduction, label_smoothing, class_dim, n_classes):
    check(tuple(target.shape) == tuple(logp.shape), lambda: f"Expected target size {as_ints(logp.shape)}, got "
          f"{as_ints(target.shape)}")
    if label_smoothing > 0.0:
        target = ew.add(ew.mul(target, 1 - label_smoothing), label_smoothing / n_classes)
    prod = ew.mul(logp, target)
    if weight is not None:
        prod = ew.mul(prod, _weight_along(weight, logp.ndim, class_dim))
    loss = ew.neg(reductions.sum(prod, class_dim))
    if reduction == "mean":
        batch = logp.numel() // n_classes if logp.ndim else 1
        return ew.div(reductions.sum(loss), batch)
    return _reduce(loss, reduction)
