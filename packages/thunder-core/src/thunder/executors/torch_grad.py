"""The torch executor's gradient rules: the backward kernels eager PyTorch runs.

Where the torch executor runs a composite (``layer_norm``, ``gelu``, attention, ``cross_entropy``, ...), its
backward here is the one ATen kernel eager's autograd calls (``native_layer_norm_backward``, ``gelu_backward``,
the SDPA backward of the backend eager picks, ...), and the forward saves what eager saves (the layer norm's mean
and rstd, the attention's logsumexp). The built-in rules of :mod:`thunder.grad` write the same backward in
decomposable symbols instead; they stay what a fusion executor that claims the composite gets.

The rules are registered with ``Executor.register_grad_rule``, as any executor's would be, each with a checker:
where eager would not use the kernel (a 3-d attention, label smoothing), the built-in rule applies. Opaque calls
(convolutions, pooling, batch and group norm) get rules too, so that they do not run as PyTorch-autograd islands.
Each rule asks :func:`thunder.grad.needs_grad` which gradients autograd wants, as eager's kernels get an output
mask from ``needs_input_grad``.

Each ATen op is a symbol with its own meta (``aten.<name>``, printed ``torch.ops.aten.<name>.default(...)`` so traces
run as they read) that the torch executor implements as that very op.
"""

from __future__ import annotations

import math

from thunder import torch as ltorch
from thunder.core import dtypes, prims
from thunder.core.proxies import TensorProxy
from thunder.core.symbol import Symbol
from thunder.core.trace import get_tracectx
from thunder.executors.torch_copies import OUT_VARIANTS
from thunder.grad.registry import needs_grad

__all__ = ["register"]

aten_symbols: dict[str, Symbol] = {}


def _aten(meta, tags=()):
    """``@_aten`` on ``name(...) -> output proxies``: the symbol of ``torch.ops.aten.<name>``."""
    name = meta.__name__
    sym = Symbol(f"ops.aten.{name}", meta, id=f"aten.{name}", is_prim=True, module="torch", tags=tags)
    aten_symbols[name] = sym
    return sym


def _like(t, shape=None, dtype=None) -> TensorProxy:
    return TensorProxy(shape=t.shape if shape is None else shape, dtype=t.dtype if dtype is None else dtype,
                       device=t.device, requires_grad=t.requires_grad)


def _grad_like(t, shape=None, dtype=None) -> TensorProxy:
    """A backward kernel's output: a gradient, computed where nothing requires grad."""
    return TensorProxy(shape=t.shape if shape is None else shape, dtype=t.dtype if dtype is None else dtype,
                       device=t.device)


def _tensor(x) -> bool:
    return isinstance(x, TensorProxy)


def _cast(x, dtype):
    return x if x.dtype is dtype else prims.convert_element_type(x, dtype)


def _accumulation_dtype(t):
    return dtypes.float32 if dtypes.is_low_precision(t.dtype) else t.dtype


def _cpu(*ts) -> bool:
    return all(t.device.type == "cpu" for t in ts if _tensor(t))


# ---------------------------------------------------------------------------------------------
# ATen ops
# ---------------------------------------------------------------------------------------------


def _stats_dtype(input):
    # the CPU kernel keeps mean and rstd in the input's dtype, the CUDA kernel in its accumulation dtype
    return input.dtype if _cpu(input) else _accumulation_dtype(input)


@_aten
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    stats = tuple(input.shape[:input.ndim - len(normalized_shape)]) + (1,) * len(normalized_shape)
    return _like(input), _like(input, stats, _stats_dtype(input)), _like(input, stats, _stats_dtype(input))


@_aten
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    return (_grad_like(input) if output_mask[0] else None, _grad_like(weight) if output_mask[1] else None,
            _grad_like(bias) if output_mask[2] else None)


@_aten
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    return _grad_like(output, dtype=input_dtype)


@_aten
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    return _grad_like(output, dtype=input_dtype)


@_aten
def gelu_backward(grad_output, self, *, approximate="none"):
    return _grad_like(self)


@_aten
def silu_backward(grad_output, self):
    return _grad_like(self)


@_aten
def threshold_backward(grad_output, self, threshold):
    return _grad_like(self)


@_aten
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    return _grad_like(grad_output, (num_weights, grad_output.shape[-1]))


@_aten
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    out = _like(self, (target.shape[0],) if reduction == 0 and self.ndim == 2 else ())
    return out, _like(self, ())


@_aten
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _grad_like(self)


@_aten
def _scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                                                scale=None):
    out = _like(query, (*query.shape[:-1], value.shape[-1]))
    return out, _like(query, tuple(query.shape[:-1]), _accumulation_dtype(query))


@_aten
def _scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                                         is_causal, *, attn_mask=None, scale=None):
    return _grad_like(query), _grad_like(key), _grad_like(value)


@_aten
def _scaled_dot_product_efficient_attention(query, key, value, attn_bias, compute_log_sumexp, dropout_p=0.0,
                                            is_causal=False, *, scale=None):
    out = _like(query, (*query.shape[:-1], value.shape[-1]))
    # the CUDA kernel pads the statistics to a multiple of 32 rows; the philox state is two scalars
    rows = -(-query.shape[-2] // 32) * 32 if compute_log_sumexp else 0
    lse = _like(query, (query.shape[0], query.shape[1], rows), dtypes.float32)
    seed = TensorProxy(shape=(), dtype=dtypes.int64, device=query.device)
    return out, lse, seed, TensorProxy(shape=(), dtype=dtypes.int64, device=query.device)


@_aten
def _scaled_dot_product_efficient_attention_backward(grad_out, query, key, value, attn_bias, out, logsumexp,
                                                     philox_seed, philox_offset, dropout_p, grad_input_mask,
                                                     is_causal=False, *, scale=None):
    return _grad_like(query), _grad_like(key), _grad_like(value), None


def _shape_like_meta(name):
    """A symbol of ``torch.ops.aten.<name>`` whose outputs' shapes PyTorch's meta kernel computes (pooling output
    sizes), used for ops that take only static sizes, as the opaque ops they differentiate do."""
    import torch

    from thunder.torch.opaque import meta_outputs

    op = getattr(torch.ops.aten, name).default

    def meta(*args, **kwargs):
        return meta_outputs(op, args, kwargs, what=f"torch.ops.aten.{name}")

    meta.__name__ = name
    return _aten(meta)


_shape_like_meta("max_pool2d_with_indices")


@_aten
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    return (_grad_like(input) if output_mask[0] else None, _grad_like(weight) if output_mask[1] else None,
            _grad_like(weight, tuple(bias_sizes)) if output_mask[2] else None)


@_aten
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return _grad_like(self)


@_aten
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    return _grad_like(self)


@_aten
def _adaptive_avg_pool2d_backward(grad_output, self):
    return _grad_like(self)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    return _like(input), _like(input, (input.shape[1],)), _like(input, (input.shape[1],))


# it updates the running statistics in place, as the call it stands for: never dropped nor merged
_aten(native_batch_norm, tags=("side_effect",))


@_aten
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                               output_mask):
    return (_grad_like(input) if output_mask[0] else None, _grad_like(weight) if output_mask[1] else None,
            _grad_like(weight) if output_mask[2] else None)


@_aten
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    return _like(input), _like(input, (N, group)), _like(input, (N, group))


@_aten
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    return (_grad_like(input) if output_mask[0] else None, _grad_like(weight) if output_mask[1] else None,
            _grad_like(weight) if output_mask[2] else None)


# ---------------------------------------------------------------------------------------------
# Rules: (symbol, checker, rule), each rule as in thunder.grad: forward recorded, backward returned
# ---------------------------------------------------------------------------------------------

_rules: list = []


def _rule(sym, checker=None):
    def decorator(rule):
        _rules.append((sym, checker, rule))
        return rule

    return decorator


def _layer_norm_ok(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    # mixed dtypes (a bfloat16 input with float32 weights) change the statistics' dtype on CPU: built-in rule
    return all(t.dtype is input.dtype for t in (weight, bias) if _tensor(t))


@_rule(ltorch.layer_norm, _layer_norm_ok)
def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    out, mean, rstd = aten_symbols["native_layer_norm"](input, shape, weight, bias, eps)
    mask = (needs_grad(input), needs_grad(weight), needs_grad(bias))

    def backward(g):
        gi, gw, gb = aten_symbols["native_layer_norm_backward"](g, input, shape, mean, rstd, weight, bias, mask)
        return {"input": gi, "weight": gw, "bias": gb}

    return out, backward


def _softmax_rule(sym, backward_op):
    def rule(a, dim, dtype=None):
        out = sym(a, dim, dtype=dtype)

        def backward(g):
            ga = aten_symbols[backward_op](g, out, dim, out.dtype)
            return {"a": _cast(ga, a.dtype)}

        return out, backward

    _rules.append((sym, None, rule))


_softmax_rule(ltorch.softmax, "_softmax_backward_data")
_softmax_rule(ltorch.log_softmax, "_log_softmax_backward_data")


@_rule(ltorch.gelu)
def _gelu(a, approximate="none"):
    out = ltorch.gelu(a, approximate=approximate)
    return out, lambda g: {"a": aten_symbols["gelu_backward"](g, a, approximate=approximate)}


@_rule(ltorch.relu)
def _relu(a):
    out = ltorch.relu(a)
    # from the output, as eager: the input need not be kept
    return out, lambda g: {"a": aten_symbols["threshold_backward"](g, out, 0)}


@_rule(ltorch.silu)
def _silu(a):
    out = ltorch.silu(a)
    return out, lambda g: {"a": aten_symbols["silu_backward"](g, a)}


def _embedding_ok(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                  sparse=False):
    return not sparse and max_norm is None


@_rule(ltorch.embedding, _embedding_ok)
def _embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    out = ltorch.embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    n = weight.shape[0]
    pad = -1 if padding_idx is None else (padding_idx + n if padding_idx < 0 else padding_idx)

    def backward(g):
        return {"weight": aten_symbols["embedding_dense_backward"](g, input, n, pad, scale_grad_by_freq)}

    return out, backward


_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _cross_entropy_ok(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                      reduction="mean", label_smoothing=0.0):
    # eager's nll_loss kernel: class indices, a batch of rows (or one row), no label smoothing
    return (input.ndim in (1, 2) and target.dtype is dtypes.int64 and label_smoothing == 0.0
            and size_average is None and reduce is None and reduction in _REDUCTIONS
            and (weight is None or weight.dtype is input.dtype))


@_rule(ltorch.cross_entropy, _cross_entropy_ok)
def _cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                   label_smoothing=0.0):
    class_dim = input.ndim - 1
    logp = ltorch.log_softmax(input, class_dim)
    r = _REDUCTIONS[reduction]
    loss, total_weight = aten_symbols["nll_loss_forward"](logp, target, weight, r, ignore_index)

    def backward(g):
        glogp = aten_symbols["nll_loss_backward"](g, logp, target, weight, r, ignore_index, total_weight)
        return {"input": aten_symbols["_log_softmax_backward_data"](glogp, logp, class_dim, input.dtype)}

    return loss, backward


def _sdpa_ok(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    # what eager's CPU backend choice asks of its flash kernel; otherwise eager runs the math path
    if not (_cpu(query, key, value, attn_mask) and query.ndim == key.ndim == value.ndim == 4):
        return False
    if query.dtype not in (dtypes.float32, dtypes.float64, dtypes.bfloat16, dtypes.float16):
        return False
    if not (query.shape[0] == key.shape[0] == value.shape[0] and key.shape[1] == value.shape[1]
            and query.shape[-1] == key.shape[-1] == value.shape[-1] and query.shape[-2] != 0 and key.shape[-2] != 0):
        return False
    if query.shape[1] != key.shape[1] and not (enable_gqa and query.shape[1] % key.shape[1] == 0):
        return False
    if any(_rows_strided(t) for t in (query, key, value)):
        return False
    # a float mask may require grad, which the flash kernel does not give
    return dropout_p == 0.0 and (attn_mask is None or attn_mask.dtype is dtypes.bool8)


def _rows_strided(t) -> bool:
    # eager's CPU flash kernel takes only rows of stride 1 (its math path the rest): as far as the strides are known
    layouts = get_tracectx().layouts if get_tracectx() is not None else None
    return layouts is not None and layouts.last_stride_is_one(t) is False


def _sdpa_cuda_ok(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    # what eager's CUDA backend choice asks of its memory-efficient kernel, kept to the cases without a mask (a
    # mask's bias needs eager's padding to 16 columns) and without grouped heads
    if not (all(_tensor(t) and t.device.type == "cuda" for t in (query, key, value)) and query.ndim == 4
            and key.ndim == 4 and value.ndim == 4):
        return False
    if query.dtype not in (dtypes.float32, dtypes.bfloat16, dtypes.float16) or not query.dtype is key.dtype is value.dtype:
        return False
    alignment = 4 if query.dtype is dtypes.float32 else 8
    head, head_v = query.shape[-1], value.shape[-1]
    if not (isinstance(head, int) and isinstance(head_v, int) and head % alignment == 0 and head_v % alignment == 0):
        return False
    if not (query.shape[0] == key.shape[0] == value.shape[0] and query.shape[1] == key.shape[1] == value.shape[1]
            and key.shape[-1] == head and key.shape[-2] == value.shape[-2]):
        return False
    return attn_mask is None and dropout_p == 0.0


def _sdpa_cuda(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    op = aten_symbols["_scaled_dot_product_efficient_attention"]
    out, lse, seed, offset = op(query, key, value, None, True, 0.0, is_causal, scale=scale)

    def backward(g):
        mask = [needs_grad(query), needs_grad(key), needs_grad(value), False]
        gq, gk, gv, _ = aten_symbols["_scaled_dot_product_efficient_attention_backward"](
            g, query, key, value, None, out, lse, seed, offset, 0.0, mask, is_causal, scale=scale)
        return {"query": gq, "key": gk, "value": gv}

    return out, backward


def _sdpa_either_ok(*args, **kwargs):
    return _sdpa_ok(*args, **kwargs) or _sdpa_cuda_ok(*args, **kwargs)


@_rule(ltorch.scaled_dot_product_attention, _sdpa_either_ok)
def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    if not _cpu(query):  # eager's CUDA memory-efficient kernel and its backward
        return _sdpa_cuda(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if attn_mask is not None:  # as eager converts a boolean mask for its kernels
        attn_mask = _cast(ltorch.where(attn_mask, 0.0, -math.inf), query.dtype)
    op = aten_symbols["_scaled_dot_product_flash_attention_for_cpu"]
    out, logsumexp = op(query, key, value, 0.0, is_causal, attn_mask=attn_mask, scale=scale)

    def backward(g):
        gq, gk, gv = aten_symbols["_scaled_dot_product_flash_attention_for_cpu_backward"](
            g, query, key, value, out, logsumexp, 0.0, is_causal, attn_mask=attn_mask, scale=scale)
        return {"query": gq, "key": gk, "value": gv}

    return out, backward


# ---------------------------------------------------------------------------------------------
# Opaque torch calls (convolutions, pooling, group norm): without a rule they would run under PyTorch's autograd
# as islands, with the same kernels but an autograd graph and engine run of their own per call. Opaque symbols
# are keyed by the callable's path; their arguments come as the program passed them, so each rule binds them
# with the callable's signature, and returns gradients by position (the checkers refuse tensors passed by name).
# ---------------------------------------------------------------------------------------------


def _opaque(path: str):
    return f"ltorch.opaque.{path}"


def _call(path: str, *args, **kwargs):
    import importlib

    from thunder.torch.opaque import opaque_symbol

    module, _, name = path.rpartition(".")
    return opaque_symbol(getattr(importlib.import_module(module), name))(*args, **kwargs)


def _n_tuple(x, n: int) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,) * n


def _conv_args(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return input, weight, bias, stride, padding, dilation, groups


def _no_tensor_kwargs(kwargs) -> bool:
    return not any(_tensor(v) for v in kwargs.values())


def _conv_rule(path: str, n: int):
    def checker(*args, **kwargs):
        input, weight, bias, stride, padding, dilation, groups = _conv_args(*args, **kwargs)
        # padding="same"/"valid" is resolved inside the op; a batch-less input is unsqueezed by it
        return _no_tensor_kwargs(kwargs) and not isinstance(padding, str) and input.ndim == n + 2

    def rule(*args, **kwargs):
        out = _call(path, *args, **kwargs)
        input, weight, bias, stride, padding, dilation, groups = _conv_args(*args, **kwargs)
        mask = (needs_grad(input), needs_grad(weight), needs_grad(bias))

        def backward(g):
            grads = aten_symbols["convolution_backward"](
                g, input, weight, (weight.shape[0],) if _tensor(bias) else None, _n_tuple(stride, n),
                _n_tuple(padding, n), _n_tuple(dilation, n), False, (0,) * n, groups, mask)
            return grads[:len(args)]

        return out, backward

    _rules.append((_opaque(path), checker, rule))


for _n in (1, 2, 3):
    _conv_rule(f"torch.conv{_n}d", _n)


def _max_pool2d_args(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    k = _n_tuple(kernel_size, 2)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _n_tuple(stride, 2)
    return input, k, s, _n_tuple(padding, 2), _n_tuple(dilation, 2), ceil_mode, return_indices


def _pool_ok(*args, **kwargs):
    return _no_tensor_kwargs(kwargs) and args[0].ndim in (3, 4)


@_rule(_opaque("torch.nn.functional.max_pool2d"), _pool_ok)
def _max_pool2d(*args, **kwargs):
    # eager's CPU kernel with autograd is max_pool2d_with_indices: the indices are what its backward reads
    input, k, s, p, d, ceil_mode, return_indices = _max_pool2d_args(*args, **kwargs)
    out, indices = aten_symbols["max_pool2d_with_indices"](input, k, s, p, d, ceil_mode)

    def backward(g, *_):
        gi = aten_symbols["max_pool2d_with_indices_backward"](g, input, k, s, p, d, ceil_mode, indices)
        return (gi,)

    return ((out, indices) if return_indices else out), backward


def _avg_pool2d_args(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                     divisor_override=None):
    k = _n_tuple(kernel_size, 2)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _n_tuple(stride, 2)
    return input, k, s, _n_tuple(padding, 2), ceil_mode, count_include_pad, divisor_override


@_rule(_opaque("torch.nn.functional.avg_pool2d"), _pool_ok)
def _avg_pool2d(*args, **kwargs):
    out = _call("torch.nn.functional.avg_pool2d", *args, **kwargs)
    input, *rest = _avg_pool2d_args(*args, **kwargs)
    return out, lambda g: (aten_symbols["avg_pool2d_backward"](g, input, *rest),)


@_rule(_opaque("torch.nn.functional.adaptive_avg_pool2d"), _pool_ok)
def _adaptive_avg_pool2d(*args, **kwargs):
    out = _call("torch.nn.functional.adaptive_avg_pool2d", *args, **kwargs)
    input = args[0]
    return out, lambda g: (aten_symbols["_adaptive_avg_pool2d_backward"](g, input),)


def _group_norm_args(input, num_groups, weight=None, bias=None, eps=1e-5):
    return input, num_groups, weight, bias, eps


def _group_norm_ok(*args, **kwargs):
    input, num_groups, weight, bias, eps = _group_norm_args(*args, **kwargs)
    return (_no_tensor_kwargs(kwargs) and input.ndim >= 2 and input.dtype in (dtypes.float32, dtypes.float64)
            and all(t.dtype is input.dtype for t in (weight, bias) if _tensor(t)))


@_rule(_opaque("torch.nn.functional.group_norm"), _group_norm_ok)
def _group_norm(*args, **kwargs):
    input, group, weight, bias, eps = _group_norm_args(*args, **kwargs)
    N, C = input.shape[0], input.shape[1]
    HxW = 1
    for d in input.shape[2:]:
        HxW = HxW * d
    out, mean, rstd = aten_symbols["native_group_norm"](input, weight, bias, N, C, HxW, group, eps)
    mask = (needs_grad(input), needs_grad(weight), needs_grad(bias))

    def backward(g):
        grads = aten_symbols["native_group_norm_backward"](g, input, mean, rstd, weight, N, C, HxW, group, mask)
        return (grads[0], None, grads[1], grads[2])[:len(args)]

    return out, backward


def _batch_norm_args(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                     eps=1e-5):
    return input, running_mean, running_var, weight, bias, training, momentum, eps


def _batch_norm_ok(*args, **kwargs):
    input, running_mean, running_var, weight, bias, training, momentum, eps = _batch_norm_args(*args, **kwargs)
    # training with batch statistics, eager's native_batch_norm; evaluation mode stays PyTorch's call
    return (_no_tensor_kwargs(kwargs) and training is True and isinstance(momentum, (int, float)) and input.ndim >= 2
            and input.dtype in (dtypes.float32, dtypes.float64)
            and all(t.dtype is input.dtype for t in (weight, bias, running_mean, running_var) if _tensor(t)))


@_rule(_opaque("torch.nn.functional.batch_norm"), _batch_norm_ok)
def _batch_norm(*args, **kwargs):
    input, running_mean, running_var, weight, bias, training, momentum, eps = _batch_norm_args(*args, **kwargs)
    out, save_mean, save_invstd = aten_symbols["native_batch_norm"](input, weight, bias, running_mean, running_var,
                                                                    True, momentum, eps)
    mask = (needs_grad(input), needs_grad(weight), needs_grad(bias))

    def backward(g):
        # with batch statistics the backward reads the saved ones, not the running statistics
        gi, gw, gb = aten_symbols["native_batch_norm_backward"](g, input, weight, None, None, save_mean, save_invstd,
                                                                True, eps, mask)
        return (gi, None, None, gw, gb)[:len(args)]

    return out, backward


# ---------------------------------------------------------------------------------------------
# Registration with the torch executor
# ---------------------------------------------------------------------------------------------


# backward kernels that compute elementwise: their result may be written into one of their arguments
_ELEMENTWISE_BACKWARDS = ("gelu_backward", "silu_backward", "threshold_backward")

# ATen ops whose kernels take only some layouts, which eager's calling code makes (torch_impls says which)
_LAYING_OUT = {
    "_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_flash_attention_for_cpu_backward": "scaled_dot_product_flash_attention_for_cpu_backward",
    "native_group_norm": "native_group_norm",
    "native_group_norm_backward": "native_group_norm_backward",
}


def register(ex) -> None:
    for name, sym in aten_symbols.items():
        # the overload itself, not the packet: a packet's call resolves the overload on every call, and in a
        # training step (caches cold after the forward and the optimizer) that was 10-20 us of each backward kernel
        path = (f"thunder.executors.torch_impls.{_LAYING_OUT[name]}" if name in _LAYING_OUT
                else f"torch.ops.aten.{name}.default")
        ex.register_implementation(sym.id, ex.register_operator(path))
    for name in _ELEMENTWISE_BACKWARDS:  # their variants writing into a dead temporary (torch_copies)
        OUT_VARIANTS[f"torch.ops.aten.{name}.default"] = ex.register_operator(
            f"thunder.executors.torch_impls.{name}_into")
    for sym, checker, rule in _rules:
        ex.register_grad_rule(sym, rule, checker=checker)

