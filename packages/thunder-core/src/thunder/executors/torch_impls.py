"""Implementations of prims that are not a single torch call, used by the torch executor.

They are importable so that printed traces calling them run as they read.
"""

from __future__ import annotations

import re

import torch


def div(a, b):
    # prims.div rounds integer quotients toward zero (C semantics)
    if isinstance(a, torch.Tensor) and (a.dtype.is_floating_point or a.dtype.is_complex):
        return torch.true_divide(a, b)
    if isinstance(b, torch.Tensor) and (b.dtype.is_floating_point or b.dtype.is_complex):
        return torch.true_divide(a, b)
    return torch.div(a, b, rounding_mode="trunc")


def convert_element_type(a, dtype):
    return a.to(dtype)


def full(shape, fill_value, *, device, dtype):
    return torch.full(shape, fill_value, device=device, dtype=dtype)


def iota(length, *, start, step, device, dtype):
    return torch.arange(start, start + length * step, step, device=device, dtype=dtype)


def uniform(shape, minval, maxval, *, device, dtype):
    return torch.empty(shape, device=device, dtype=dtype).uniform_(minval, maxval)


def broadcast_in_dim(a, shape, broadcast_dimensions):
    if len(broadcast_dimensions) == len(shape) and list(broadcast_dimensions) == _AXES[:len(shape)]:
        return a.expand(shape)  # the same rank, each dimension where it was (a backward's cotangent of a broadcast)
    view_shape = [1] * len(shape)
    for d, bd in zip(a.shape, broadcast_dimensions):
        view_shape[bd] = d
    return a.view(view_shape).expand(shape) if a.ndim else a.expand(shape)


_AXES = list(range(64))


def slice_prim(a, start_indices, end_indices, strides=None):
    index = tuple(slice(s, e, st) for s, e, st in zip(start_indices, end_indices, strides or (1,) * a.ndim))
    return a[index]


def squeeze(a, dims):
    return torch.squeeze(a, tuple(dims)) if dims else a


def take(a, indices, dim):
    return torch.index_select(a, dim, indices.reshape(-1)) if indices.ndim == 0 else torch.index_select(a, dim, indices)


def take_along_axis(a, indices, dim):
    # torch.take_along_dim takes only int64 indices; the prim (like torch.gather) takes any integer dtype
    return torch.take_along_dim(a, indices if indices.dtype == torch.int64 else indices.long(), dim)


def index(a, indices):
    return a[tuple(slice(None) if i is None else i for i in indices)]


def index_put(a, indices, values, accumulate):
    # aten's index_put takes None for a full slice (prims.index's indices); torch.index_put does not
    return torch.ops.aten.index_put.default(a, list(indices), values, accumulate)


_POSITIONS = (torch.int64, torch.int32)


def index_put_(a, indices, values, accumulate):
    # one position per index (0-d integer tensors on the CPU: the gradient of ``w[expert]``): a write into the slice
    # there, as eager's select_backward does, not the indexing kernel's pass computing an offset per element
    # (a loop, not generators: called once per expert and weight in a MoE layer's backward, where the kernels are
    # small)
    if a.is_cpu and isinstance(values, torch.Tensor) and values.dtype == a.dtype \
            and values.ndim <= a.ndim - len(indices):
        positions = []
        for i in indices:
            if i is None or i.ndim != 0 or i.dtype not in _POSITIONS or not i.is_cpu:
                break
            positions.append(int(i))
        else:
            part = a[tuple(positions)]
            if accumulate:
                part.add_(values)
            else:
                part.copy_(values)
            return a
    return torch.ops.aten.index_put_.default(a, list(indices), values, accumulate)


def sum_prim(a, dims):
    return torch.sum(a, dims) if dims else a.clone()


# Elementwise ATen backward kernels writing into a given buffer (``out=``, as the torch functions of
# torch_copies.OUT_CAPABLE take it; ATen names it ``grad_input``): the torch executor passes a dead temporary of the
# result's shape, which may be the incoming gradient itself. Without one (a pass dropped a buffer it no longer
# computes: executors/torch_unused_cotangents.py, fuzz seed 540201) they allocate the result.
def gelu_backward_into(grad_output, self, *, approximate="none", out=None):
    if out is None:
        return torch.ops.aten.gelu_backward.default(grad_output, self, approximate=approximate)
    return torch.ops.aten.gelu_backward.grad_input(grad_output, self, approximate=approximate, grad_input=out)


def silu_backward_into(grad_output, self, *, out=None):
    if out is None:
        return torch.ops.aten.silu_backward.default(grad_output, self)
    return torch.ops.aten.silu_backward.grad_input(grad_output, self, grad_input=out)


def threshold_backward_into(grad_output, self, threshold, *, out=None):
    if out is None:
        return torch.ops.aten.threshold_backward.default(grad_output, self, threshold)
    return torch.ops.aten.threshold_backward.grad_input(grad_output, self, threshold, grad_input=out)


# ATen kernels that read their inputs' memory as laid out one way: eager's own calling code hands them such tensors
# (a copy otherwise), so the torch executor's implementations do as well. Given other strides, the kernels return
# garbage without an error.
def _rows_contiguous(t):
    return t if t.stride(-1) == 1 else t.contiguous()


def scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None,
                                               scale=None):
    # the CPU flash kernel reads each head's rows contiguously; where one is strided eager's backend choice takes
    # its math path, whose result equals the kernel's on a copy up to rounding
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(
        _rows_contiguous(query), _rows_contiguous(key), _rows_contiguous(value), dropout_p, is_causal,
        attn_mask=attn_mask, scale=scale)


def scaled_dot_product_flash_attention_for_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p,
                                                        is_causal, *, attn_mask=None, scale=None):
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(
        grad_out, _rows_contiguous(query), _rows_contiguous(key), _rows_contiguous(value), out, logsumexp, dropout_p,
        is_causal, attn_mask=attn_mask, scale=scale)


_CHANNELS_LAST = {4: torch.channels_last, 5: torch.channels_last_3d}


def _norm_layout(input):
    # eager's group_norm: on the CPU, the input in the memory format it suggests (a channels-last one stays so)
    channels_last = _CHANNELS_LAST.get(input.ndim)
    if input.is_cpu and channels_last is not None and not input.is_contiguous() \
            and input.is_contiguous(memory_format=channels_last):
        return channels_last
    return torch.contiguous_format


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    return torch.ops.aten.native_group_norm.default(
        input.contiguous(memory_format=_norm_layout(input)), None if weight is None else weight.contiguous(),
        None if bias is None else bias.contiguous(), N, C, HxW, group, eps)


def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    # as eager's derivative formula: the incoming gradient in the input's layout (a sum's gradient is expanded)
    layout = _norm_layout(input)
    return torch.ops.aten.native_group_norm_backward.default(
        grad_out.contiguous(memory_format=layout), input.contiguous(memory_format=layout), mean, rstd,
        None if weight is None else weight.contiguous(), N, C, HxW, group, output_mask)


def prod_prim(a, dims):
    out = a
    for d in sorted(dims, reverse=True):
        out = torch.prod(out, d)
    return out if dims else a.clone()


def var_prim(a, dims, *, correction):
    return torch.var(a, dims, correction=correction)


def device_put(a, device):
    return a.to(device)


def copy_to_out_(computed, *, out, grad_enabled=True):
    if grad_enabled:
        return out.copy_(computed)
    with torch.no_grad():  # the program updated it under no_grad (an optimizer step)
        return out.copy_(computed)


def update_without_grad(value, old):
    return value


def setitem(a, key, value):
    out = a.clone()
    out[key] = value
    return out


def derivative_not_implemented(g, a, op_name):
    if getattr(g, "of_an_unused_output", False):  # the loss does not use the output: eager's backward never gets here
        return torch.zeros_like(a)
    raise NotImplementedError(f"the derivative for '{op_name}' is not implemented.")


def raise_in_backward(g, message, entry_version=0):
    if getattr(g, "of_an_unused_output", False):  # the loss does not use the output: eager's backward never gets here
        return g
    if entry_version:  # the message counts the call's own updates: eager's counter started at entry_version
        current, expected = (int(n) + entry_version for n in _VERSIONS.search(message).groups())
        message = _VERSIONS.sub(f"is at version {current}; expected version {expected} instead", message)
    raise RuntimeError(message)


_VERSIONS = re.compile(r"is at version (\d+); expected version (\d+) instead")


def tensor_version(a):
    return a._version


def get_rng_state(*, size):
    return torch.get_rng_state()


def random_fill_like(a, method, *args, **kwargs):
    # empty_like keeps a's strides, so the fill visits positions in eager's order and draws the same numbers
    return getattr(torch.empty_like(a), method)(*args, **kwargs)


# ops whose output size was read from tensor data before them (thunder/torch/data_dependent.py): the size is in
# the trace for the metadata, the kernel computes it again
def nonzero_sized(a, size):
    # the size is known already: nonzero_static does not read it again (no second device sync); its result holds
    # eager's values, in another memory order that no program can see (stride() is answered by the layout model)
    return torch.nonzero_static(a, size=size)


def nonzero_counted(a):
    # the size read inside a segment: eager's nonzero, its rows counted by the kernel
    result = torch.nonzero(a)
    return result, result.shape[0]


def unique_sized(a, size, sorted=True, return_inverse=False, return_counts=False):
    return torch.unique(a, sorted=sorted, return_inverse=return_inverse, return_counts=return_counts)


def unique_consecutive_sized(a, size, return_inverse=False, return_counts=False):
    return torch.unique_consecutive(a, return_inverse=return_inverse, return_counts=return_counts)


def bincount_sized(a, weights, minlength, size):
    return torch.bincount(a, weights, minlength)


def embedding_renorm(weight, input, max_norm, norm_type):
    # eager's kernel on a copy: the trace's copy into the weight makes it the update
    renormed = weight.detach().clone()
    torch.embedding_renorm_(renormed, input.contiguous(), max_norm, norm_type)
    return renormed


def foreach_in_place(name, tensors, *args, **kwargs):
    """``torch.<name>(tensors, ...)``, an in-place foreach op (``_foreach_add_``), returning ``tensors``: what the
    per-tensor ``out=`` calls it stands for return."""
    getattr(torch, name)(tensors, *args, **kwargs)
    return tensors
