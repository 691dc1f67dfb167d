"""Ops whose output size depends on tensor data: nonzero, argwhere, torch.where(cond), masked_select, boolean-mask
indexing ``x[mask]`` / ``x[mask] = v``, unique, unique_consecutive, bincount, repeat_interleave with tensor repeats,
torch.split with sizes in a tensor, ``one_hot`` inferring its number of classes; and values read at the call:
``allclose``, a tensor bounding a slice or starting ``narrow``.

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

__all__ = ["nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "bincount", "one_hot", "allclose"]


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


@torchsymbol(name="one_hot")
def one_hot_symbol(a, num_classes):
    """``F.one_hot(a, num_classes)`` with a number of classes given or read before (``num_classes=-1``)."""
    check(a.dtype is dtypes.int64, "one_hot is only applicable to index tensor of type LongTensor.", RuntimeError)
    return TensorProxy(shape=(*a.shape, num_classes), dtype=dtypes.int64, device=a.device)


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


def one_hot(tensor, num_classes=-1):
    # eager's checks in eager's order; values out of range are the kernel's own errors when it runs
    check(tensor.dtype is dtypes.int64, "one_hot is only applicable to index tensor of type LongTensor.", RuntimeError)
    if num_classes != -1:
        return one_hot_symbol(tensor, num_classes)
    check(tensor.numel() != 0, "Can not infer total number of classes from empty tensor.", RuntimeError)
    classes = _read_size(reductions.amax(shape_ops.reshape(tensor, (-1,)), 0), "one_hot") + 1
    # every value negative: eager's kernel refuses the smallest first
    check(classes > 0, "Class values must be non-negative.", RuntimeError)
    return one_hot_symbol(tensor, classes)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    # a Python bool: read where the user calls it (isclose's checks are eager's)
    from thunder.torch.opaque import call_opaque

    close = call_opaque(torch.isclose, (a, b), {"rtol": rtol, "atol": atol, "equal_nan": equal_nan})
    return bool(reductions.all_(close))


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
torch_function_table[torch.nn.functional.one_hot] = one_hot
register_method("allclose", allclose, torch.allclose, torch.Tensor.allclose)
register_nondifferentiable(nonzero_static, nonzero_sized, nonzero_counted, bincount_sized, one_hot_symbol)


# ------------------------------------------------------------------------------------------------------------
# Rewrites at the call: sizes read before the symbol is entered
# ------------------------------------------------------------------------------------------------------------


def _check_mask_shapes(a, entries) -> None:
    """Eager's check that each mask's shape is that of the dims it indexes, in the tensor after the key's basic
    indexing (ints select, slices shorten, None adds a dim): eager reads nothing before it, nor does thunder."""
    consumed = sum(k.ndim if _is_mask(k) else 1 for k in entries
                   if k is not None and k is not Ellipsis and not isinstance(k, bool)
                   and not (isinstance(k, TensorProxy) and k.ndim == 0 and _is_mask(k)))
    if consumed > a.ndim:
        return  # too many indices: the op's own error
    sliced, masks, dim = [], [], 0
    for k in entries:
        if k is Ellipsis:
            sliced.extend(a.shape[dim:dim + a.ndim - consumed])
            dim += a.ndim - consumed
        elif k is None or isinstance(k, bool) or (_is_mask(k) and k.ndim == 0):
            sliced.append(0 if k is False else 1)
        elif isinstance(k, slice):
            sliced.append(len(range(*slice(*(int(b) if b is not None else None for b in (k.start, k.stop, k.step)))
                                    .indices(int(a.shape[dim])))))
            dim += 1
        elif _is_mask(k):
            masks.append((k, len(sliced)))
            sliced.extend(a.shape[dim:dim + k.ndim])
            dim += k.ndim
        elif isinstance(k, TensorProxy):
            sliced.append(a.shape[dim])
            dim += 1
        else:  # an int selects: its dim is gone
            dim += 1
    sliced.extend(a.shape[dim:])
    for mask, start in masks:
        for j, size in enumerate(mask.shape):
            check(size == sliced[start + j],
                  lambda: f"The shape of the mask {[int(s) for s in mask.shape]} at index {j} does not match the shape "
                          f"of the indexed tensor {[int(s) for s in sliced]} at index {start + j}", IndexError)


def _mask_key(a, key):
    """``key`` with each boolean mask replaced by the index tensors of its True positions (eager's meaning)."""
    entries = key if isinstance(key, tuple) else (key,)
    if not any(_is_mask(k) for k in entries):
        return key
    if isinstance(a, TensorProxy):
        _check_mask_shapes(a, entries)
    out = []
    for k in entries:
        out.extend(_mask_indices(k) if _is_mask(k) else (k,))
    return tuple(out)


def _bound(b):
    # a tensor as a slice's bound is Python's index of it (eager calls __index__): a value read here, at the call
    return b.__index__() if isinstance(b, TensorProxy) else b


def _slice_bounds(key):
    """``key`` with the tensors bounding its slices (``x[: t.max() + 1]``) read as Python ints."""
    entries = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, slice) and any(isinstance(b, TensorProxy) for b in (k.start, k.stop, k.step))
               for k in entries):
        return key
    out = tuple(slice(_bound(k.start), _bound(k.stop), _bound(k.step)) if isinstance(k, slice) else k
                for k in entries)
    return out if isinstance(key, tuple) else out[0]


def _rewrite_index(sym, args, kwargs):
    if len(args) >= 2:
        args = (args[0], _mask_key(args[0], _slice_bounds(args[1])), *args[2:])
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


def _rewrite_narrow(sym, args, kwargs):
    # a tensor start is read as an index where the user calls narrow (eager's 0-dim integral tensor)
    args = list(args)
    start = args[2] if len(args) > 2 else kwargs.get("start")
    if isinstance(start, TensorProxy):
        check(start.ndim == 0 and dtypes.is_integer_dtype(start.dtype) and start.dtype is not dtypes.bool8,
              "start must be an 0-dim integral Tensor.", RuntimeError)
        if len(args) > 2:
            args[2] = start.__index__()
        else:
            kwargs = {**kwargs, "start": start.__index__()}
    return tuple(args), kwargs


def _chain(rewrite, earlier):
    if earlier is None:
        return rewrite
    return lambda sym, args, kwargs: rewrite(sym, *earlier(sym, args, kwargs))


for _id, _rewrite in (("ltorch.getitem", _rewrite_index), ("ltorch.setitem_", _rewrite_index),
                      ("ltorch.repeat_interleave", _rewrite_repeat_interleave), ("ltorch.narrow", _rewrite_narrow)):
    call_rewrites[_id] = _chain(_rewrite, call_rewrites.get(_id))
