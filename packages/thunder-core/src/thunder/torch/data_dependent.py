"""Ops whose output size depends on tensor data: nonzero, argwhere, torch.where(cond), masked_select, boolean-mask
indexing ``x[mask]`` / ``x[mask] = v``, unique, unique_consecutive, bincount, repeat_interleave with tensor repeats,
torch.split with sizes in a tensor.

Each reads its output size where the user calls it (``int(count)``: the program is split there, see
``thunder/frontend/value_reads.py``), then records an op of that fixed size (``nonzero_sized``,
``repeat_interleave(output_size=)``, ...), so everything after it has ordinary static shapes and the segment after
the read is cached behind a check of the size. Selections are index tensors read by ``index_select``/advanced
indexing, whose gradients (``index_add``, ``index_put``) are eager's.

The reads happen before the op's symbol is entered (a program can only be split between operations): the torch
callables map to the plain functions below, and ``x[mask]`` rewrites its key at the call (``call_rewrites``).
"""

from __future__ import annotations

import warnings

import torch

from thunder.core import dtypes
from thunder.core.errors import UnsupportedError, check, read_in_sub_program, user_location_suffix
from thunder.core.proxies import TensorProxy, proxy_number, torch_function_table
from thunder.core.shapes import broadcast_shapes
from thunder.core.symbol import call_rewrites
from thunder.core.trace import get_tracectx
from thunder.grad.registry import register_nondifferentiable
from thunder.torch import elementwise as ew
from thunder.torch import reductions, shape_ops
from thunder.torch.opaque import OpaqueFallbackWarning
from thunder.torch.registry import register_method, torchsymbol

__all__ = ["nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "bincount"]


def _read_size(count, op: str):
    """The size ``op``'s output will have, counted by the 0-d tensor ``count``: read from tensor data where the user
    called the op, a symbolic number afterwards (frontend/value_reads.py, frontend/size_guards.py)."""
    reader = getattr(get_tracectx(), "value_reader", None)
    if reader is None:
        raise read_in_sub_program(f"{op} needs the size of its output, read from tensor data",
                                  "keep the sizes static (a mask and torch.where, torch.nonzero_static)")
    return reader.read_size(count, f"the output size of {op}")


def _is_mask(k) -> bool:
    return isinstance(k, TensorProxy) and k.dtype in (dtypes.bool8, dtypes.uint8)


# ------------------------------------------------------------------------------------------------------------
# Symbols of a known size: what the trace records once the size is read
# ------------------------------------------------------------------------------------------------------------


@torchsymbol(torch.nonzero_static, method="nonzero_static")
def nonzero_static(a, *, size, fill_value=-1):
    return TensorProxy(shape=(size, a.ndim), dtype=dtypes.int64, device=a.device)


@torchsymbol(name="nonzero_sized")
def nonzero_sized(a, size):
    """``torch.nonzero(a)`` whose result has ``size`` rows (read before). Eager's result is column-major, unlike
    ``nonzero_static``'s on CPU; thunder/transforms/layouts.py knows it by this symbol."""
    return TensorProxy(shape=(size, a.ndim), dtype=dtypes.int64, device=a.device)


@torchsymbol(name="nonzero_counted")
def nonzero_counted(a):
    """``torch.nonzero(a)`` and its number of rows, read from the result: where a segment reads the size of
    ``nonzero`` inside (frontend/inner_reads.py), the kernel counts, as eager's does. Bound with the size the rest of
    the segment names; tracing it makes a new number."""
    size = proxy_number(0)
    size.data_dependent = True
    return TensorProxy(shape=(size, a.ndim), dtype=dtypes.int64, device=a.device), size


def _like_eager(fn, a, **kwargs):
    """Output dtypes of ``fn`` as eager makes them, asked on one-element tensors of the same dtypes."""
    probe = {k: (torch.zeros(1, dtype=dtypes.to_torch_dtype(v.dtype)) if isinstance(v, TensorProxy) else v)
             for k, v in kwargs.items()}
    out = fn(torch.zeros(1, dtype=dtypes.to_torch_dtype(a.dtype)), **probe)
    return out if isinstance(out, tuple) else (out,)


def _unique_outputs(a, size, return_inverse, return_counts, fn):
    values = _like_eager(fn, a)[0]
    # eager's values require grad where the input does (their derivative is not implemented: the backward raises)
    outs = [TensorProxy(shape=(size,), dtype=dtypes.to_dtype(values.dtype), device=a.device,
                        requires_grad=a.requires_grad and values.dtype.is_floating_point)]
    if return_inverse:
        outs.append(TensorProxy(shape=tuple(a.shape), dtype=dtypes.int64, device=a.device))
    if return_counts:
        outs.append(TensorProxy(shape=(size,), dtype=dtypes.int64, device=a.device))
    return outs[0] if len(outs) == 1 else tuple(outs)


@torchsymbol(name="unique_sized")
def unique_sized(a, size, sorted=True, return_inverse=False, return_counts=False):
    """``torch.unique(a, ...)`` whose result has ``size`` values (read before)."""
    return _unique_outputs(a, size, return_inverse, return_counts, torch.unique)


@torchsymbol(name="unique_consecutive_sized")
def unique_consecutive_sized(a, size, return_inverse=False, return_counts=False):
    """``torch.unique_consecutive(a, ...)`` whose result has ``size`` values (read before)."""
    return _unique_outputs(a, size, return_inverse, return_counts, torch.unique_consecutive)


@torchsymbol(name="bincount_sized")
def bincount_sized(a, weights, minlength, size):
    """``torch.bincount(a, weights, minlength)`` whose result has ``size`` bins (read before)."""
    (out,) = _like_eager(torch.bincount, a, weights=weights)
    return TensorProxy(shape=(size,), dtype=dtypes.to_dtype(out.dtype), device=a.device)


# ------------------------------------------------------------------------------------------------------------
# What the program calls
# ------------------------------------------------------------------------------------------------------------


def nonzero(a, *, as_tuple=False):
    flat = a if a.ndim else shape_ops.reshape(a, (1,))
    size = _read_size(reductions.sum(ew.ne(flat, 0)), "nonzero")
    indices = nonzero_sized(flat, size)
    if not as_tuple:
        return indices if a.ndim else indices[:, :0]
    return tuple(indices[:, i] for i in range(flat.ndim))


def argwhere(a):
    return nonzero(a)


def _mask_indices(mask) -> tuple:
    check(isinstance(mask, TensorProxy), "mask must be a tensor", TypeError)
    return nonzero(mask if mask.dtype is dtypes.bool8 else ew.ne(mask, 0), as_tuple=True)


def masked_select(a, mask):
    check(mask.dtype is dtypes.bool8, lambda: f"masked_select: expected BoolTensor for mask, got {mask.dtype}",
          RuntimeError)
    shape = broadcast_shapes(tuple(mask.shape), tuple(a.shape))  # eager names the mask "tensor a"
    a, mask = shape_ops.expand(a, shape), shape_ops.expand(mask, shape)
    (index,) = nonzero(shape_ops.reshape(mask, (-1,)), as_tuple=True)
    return shape_ops.reshape(a, (-1,))[index]


def _unique_size(a, consecutive: bool):
    flat = shape_ops.reshape(a, (-1,))
    if flat.shape[0] == 0:
        return 0
    if not consecutive:
        with warnings.catch_warnings():  # runs as one PyTorch call; the user called unique, not sort
            warnings.simplefilter("ignore", OpaqueFallbackWarning)
            flat = torch.sort(flat)[0]
    changes = ew.ne(flat[1:], flat[:-1])
    return _read_size(reductions.sum(changes), "unique_consecutive" if consecutive else "unique") + 1


def _refuse_dim(name, dim):
    if dim is not None:
        raise UnsupportedError(f"{name}(dim=...) is not supported by thunder yet{user_location_suffix()}; "
                               "flatten the tensor or compute it outside the jitted function")


def unique(a, sorted=True, return_inverse=False, return_counts=False, dim=None):
    _refuse_dim("unique", dim)
    return unique_sized(a, _unique_size(a, consecutive=False), sorted, return_inverse, return_counts)


def unique_consecutive(a, return_inverse=False, return_counts=False, dim=None):
    _refuse_dim("unique_consecutive", dim)
    return unique_consecutive_sized(a, _unique_size(a, consecutive=True), return_inverse, return_counts)


def bincount(a, weights=None, minlength=0):
    check(a.ndim == 1 and dtypes.is_integer_dtype(a.dtype), "bincount only supports 1-d non-negative integral inputs.",
          RuntimeError)
    size = minlength if a.shape[0] == 0 else max(_read_size(reductions.amax(a, 0), "bincount") + 1, minlength)
    return bincount_sized(a, weights, minlength, size)


def _where(condition, *args, **kwargs):
    if not args and not kwargs:
        return nonzero(condition, as_tuple=True)
    return _where_symbol(condition, *args, **kwargs)


def _split(a, split_size_or_sections, dim=0):
    # sizes in a tensor: eager refuses them, so does thunder; sizes read with .tolist() split the program there
    check(not isinstance(split_size_or_sections, TensorProxy),
          "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not Tensor", TypeError)
    return _split_symbol(a, split_size_or_sections, dim)


_where_symbol = torch_function_table[torch.where]
_split_symbol = torch_function_table[torch.split]
torch_function_table[torch.where] = _where
register_method("split", _split, torch.split, torch.Tensor.split)
register_method("nonzero", nonzero, torch.nonzero, torch.Tensor.nonzero)
register_method("argwhere", argwhere, torch.argwhere, torch.Tensor.argwhere)
register_method("masked_select", masked_select, torch.masked_select, torch.Tensor.masked_select)
register_method("unique", unique, torch.unique, torch.Tensor.unique)
register_method("unique_consecutive", unique_consecutive, torch.unique_consecutive, torch.Tensor.unique_consecutive)
register_method("bincount", bincount, torch.bincount, torch.Tensor.bincount)
register_nondifferentiable(nonzero_static, nonzero_sized, nonzero_counted, bincount_sized)


# ------------------------------------------------------------------------------------------------------------
# Rewrites at the call: sizes read before the symbol is entered
# ------------------------------------------------------------------------------------------------------------


def _mask_key(key):
    """``key`` with each boolean mask replaced by the index tensors of its True positions (eager's meaning)."""
    entries = key if isinstance(key, tuple) else (key,)
    if not any(_is_mask(k) for k in entries):
        return key
    out = []
    for k in entries:
        out.extend(_mask_indices(k) if _is_mask(k) else (k,))
    return tuple(out)


def _rewrite_index(sym, args, kwargs):
    if len(args) >= 2:
        args = (args[0], _mask_key(args[1]), *args[2:])
    return args, kwargs


def _rewrite_repeat_interleave(sym, args, kwargs):
    repeats = args[1] if len(args) > 1 else kwargs.get("repeats")
    if repeats is None and len(args) == 1:  # repeat_interleave(repeats): the counts of arange(len(repeats))
        repeats = args[0]
    if isinstance(repeats, TensorProxy) and kwargs.get("output_size") is None:
        a, dim = args[0], (args[2] if len(args) > 2 else kwargs.get("dim"))
        total = reductions.sum(repeats)
        if repeats.numel() == 1 and a is not repeats:  # one count for every element along dim
            total = ew.mul(total, a.numel() if dim is None else a.shape[dim])
        kwargs = {**kwargs, "output_size": _read_size(total, "repeat_interleave")}
    return args, kwargs


def _chain(rewrite, earlier):
    if earlier is None:
        return rewrite
    return lambda sym, args, kwargs: rewrite(sym, *earlier(sym, args, kwargs))


for _id, _rewrite in (("ltorch.getitem", _rewrite_index), ("ltorch.setitem_", _rewrite_index),
                      ("ltorch.repeat_interleave", _rewrite_repeat_interleave)):
    call_rewrites[_id] = _chain(_rewrite, call_rewrites.get(_id))
