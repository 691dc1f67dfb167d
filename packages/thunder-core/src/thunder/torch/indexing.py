"""Indexing: ``Tensor.__getitem__``, index_select, gather/take_along_dim, masked_fill, tril/triu.

``a[key]`` follows PyTorch's order: integers select, slices slice, None adds a dim, Ellipsis fills, all
applied left to right; integer tensors (and lists) are then applied together as advanced indexing
(``prims.index``) on the dims they ended up at.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes, prims
from thunder.core.errors import UnsupportedError, check, user_location_suffix
from thunder.core.proxies import IntegerProxy, NumberProxy, TensorProxy, pyval
from thunder.core.shapes import as_ints, broadcast_shapes, canonicalize_dim
from thunder.torch import elementwise as ew
from thunder.torch import shape_ops
from thunder.torch.creation import constant_tensor
from thunder.torch.registry import torchsymbol


def _is_int(x) -> bool:
    return isinstance(x, (int, IntegerProxy)) and not isinstance(x, bool)


def _normalize_key(key) -> tuple:
    if isinstance(key, tuple):
        return key
    return (key,)


def _as_index_tensor(x, device):
    if isinstance(x, TensorProxy):
        check(dtypes.is_integer_dtype(x.dtype) or dtypes.is_boolean_dtype(x.dtype),
              "tensors used as indices must be long, int, byte or bool tensors", IndexError)
        check(not dtypes.is_boolean_dtype(x.dtype) and x.dtype is not dtypes.uint8,
              lambda: "indexing with a boolean mask tensor gives a data-dependent shape, which thunder does not support "
              f"yet{user_location_suffix()}; use torch.where(mask, a, b) or a.masked_fill(~mask, value) instead",
              UnsupportedError)
        return x
    # a (nested) list of ints; a list of bools is a mask: its True positions are known now
    flat = list(x)
    if flat and all(isinstance(v, bool) for v in flat):
        return constant_tensor([i for i, v in enumerate(flat) if v], dtypes.int64, device)
    check(all(_is_int(v) or isinstance(v, (list, tuple)) for v in flat),
          "tensors used as indices must be long, int, byte or bool tensors", IndexError)
    return constant_tensor(x, dtypes.int64, device)


def _has_elements(a, key) -> bool:
    """Eager's index kernels check bounds only when there is something to gather or scatter: a tensor with
    an empty dim, or an empty list in the key, checks nothing (conservatively: any empty dim)."""
    return all(d != 0 for d in a.shape) and all(len(k) > 0 for k in key if isinstance(k, list))


def _check_constant_bounds(index: list, size, dim) -> None:
    """Eager's bounds check for a list of ints (known now, unlike an index tensor's values)."""
    flat = list(index)
    if flat and all(isinstance(v, bool) for v in flat):
        return  # a mask
    while any(isinstance(v, (list, tuple)) for v in flat):
        flat = [y for v in flat for y in (v if isinstance(v, (list, tuple)) else (v,))]
    for v in flat:
        if _is_int(v):
            check(-size <= v < size, lambda: f"index {v} is out of bounds for dimension {dim} with size {size}",
                  IndexError)


def check_index_put_value(a, key, value) -> None:
    """``a[key] = value`` with lists or index tensors in the key is eager's index_put_, which checks that the value
    broadcasts to the indexed shape before the indices' bounds. The shape is PyTorch's own, on meta tensors (not
    asked where the key has an error of its own, raised by check_constant_key)."""
    keys = _normalize_key(key)
    if not isinstance(value, TensorProxy) or not any(isinstance(k, (list, TensorProxy)) for k in keys):
        return
    if any(_is_int(k) and not isinstance(k, int) for k in keys):
        return
    sizes = as_ints(a.shape)  # a failing check makes the entry raise for these sizes only
    if 0 in sizes:
        return  # an index into an empty dim is eager's first error

    def meta(k):
        if isinstance(k, TensorProxy):
            return torch.empty(tuple(pyval(d) for d in k.shape), dtype=dtypes.to_torch_dtype(k.dtype), device="meta")
        return k

    try:
        shape = tuple(torch.empty(sizes, device="meta")[tuple(meta(k) for k in keys)].shape)
    except Exception:
        return
    vshape = tuple(as_ints(value.shape))
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    fits = len(vshape) <= len(shape) and all(v == 1 or v == d for v, d in zip(vshape[::-1], shape[::-1]))
    check(fits, lambda: f"shape mismatch: value tensor of shape {as_ints(value.shape)} cannot be broadcast to indexing "
          f"result of shape {list(shape)}")


def check_constant_key(a, key) -> None:
    """The bounds eager checks for the ints and int lists of an index ``a[key] = ...`` (for __setitem__, which
    runs as one call: its result may be unused, and eager raises anyway)."""
    key = _normalize_key(key)
    consumed = sum(1 for k in key if not (k is None or k is Ellipsis or isinstance(k, bool)))
    a_dim = 0
    advanced = 0  # lists and tensors so far: eager's message for a list names its position among them
    for position, k in enumerate(key):  # eager's message for an int names its position in the key
        check(a_dim < a.ndim or k is None or k is Ellipsis or isinstance(k, bool),
              lambda: f"too many indices for tensor of dimension {a.ndim}", IndexError)
        if isinstance(k, slice) and k.step is not None:  # eager checks the slices first, as a view of them is taken
            check(k.step != 0, "slice step cannot be zero", ValueError)
            check(k.step > 0, "step must be greater than zero", ValueError)
        if k is Ellipsis:
            a_dim += a.ndim - consumed
        elif _is_int(k):
            size = a.shape[a_dim]
            check(-size <= k < size, lambda: f"index {k} is out of bounds for dimension {position} with size {size}",
                  IndexError)
            a_dim += 1
        elif not (k is None or isinstance(k, bool)):
            if isinstance(k, list) and _has_elements(a, key):
                _check_constant_bounds(k, a.shape[a_dim], advanced)
            advanced += not isinstance(k, slice)
            a_dim += 1


def written_before_bounds_error(a, key, value):
    """``a[key] = value`` whose one advanced index is a flat list of ints, one of them out of bounds: eager's CPU
    kernel writes the elements of ``a[key]`` in row-major order and raises at the first with a bad index, having
    written those before it: ``a[key][0, ..., 0, :bad]`` (the dims before the list's at their first position).
    Returns (the key and value of that partial write), or None where nothing is written that way: no index out of
    bounds, or the first; another form of key (several lists, nested lists, index tensors, whose values thunder does
    not know, symbolic slice bounds); a value that does not broadcast (eager raises that first). The sizes compared
    are numbers of the trace (constraints where symbolic)."""
    key = _normalize_key(key)
    lists = [i for i, k in enumerate(key) if isinstance(k, (list, TensorProxy))]
    if len(lists) != 1 or not isinstance(key[lists[0]], list) or not _has_elements(a, key):
        return None
    (p,) = lists
    index = key[p]
    if not index or not all(_is_int(v) for v in index):
        return None
    consumed = sum(1 for k in key if not (k is None or k is Ellipsis or isinstance(k, bool)))
    lead = []  # the key before the list, each dim of the result there taken at its first position
    a_dim = 0
    for k in key[:p]:
        if k is Ellipsis:
            lead += [slice(0, 1)] * (a.ndim - consumed)
            a_dim += a.ndim - consumed
        elif k is None or isinstance(k, bool):
            lead.append(k)
        elif isinstance(k, slice):
            if any(isinstance(b, NumberProxy) for b in (k.start, k.stop, k.step)) or (k.step or 1) <= 0:
                return None  # a step eager refuses before writing anything
            first = k.indices(int(a.shape[a_dim]))[0]  # of a symbolic size: a constraint
            lead.append(slice(first, first + 1))
            a_dim += 1
        else:  # an int: a select, no dim of the result
            lead.append(k)
            a_dim += 1
    if a_dim >= a.ndim:
        return None
    size = a.shape[a_dim]
    bad = next((j for j, v in enumerate(index) if not (-size <= v < size)), None)
    if not bad:
        return None
    out_dim = sum(1 for k in lead if not _is_int(k))  # where the list's positions are in the result
    if isinstance(value, TensorProxy):
        result_ndim = a.ndim - sum(1 for k in key if _is_int(k)) + sum(1 for k in key if k is None or isinstance(k, bool))
        offset = result_ndim - value.ndim
        if offset < 0 or (out_dim >= offset and value.shape[out_dim - offset] not in (1, len(index))):
            return None
        for d in range(max(offset, 0), out_dim + 1):
            if value.shape[d - offset] != 1:
                value = shape_ops.slice_dim(value, d - offset, 0, bad if d == out_dim else 1)
    return (*lead, index[:bad], *key[p + 1:]), value


@torchsymbol(torch.Tensor.__getitem__, method="__getitem__")
def getitem(a, key):
    key = _normalize_key(key)
    for k in key:
        check(k is None or k is Ellipsis or isinstance(k, (bool, slice, list, TensorProxy)) or _is_int(k),
              lambda: f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
              f"indices (got {type(k).__name__})", IndexError)
    consumed = sum(1 for k in key if not (k is None or k is Ellipsis or isinstance(k, bool)))
    ellipses = sum(1 for k in key if k is Ellipsis)
    check(ellipses <= 1, "an index can only have a single ellipsis ('...')", IndexError)
    check(consumed <= a.ndim, lambda: f"too many indices for tensor of dimension {a.ndim}", IndexError)

    # Basic indexing, one key entry at a time; `dim` is the current dim of `out`.
    out, dim = a, 0
    advanced: dict[int, TensorProxy] = {}  # dim of `out` -> index tensor
    for position, k in enumerate(key):  # eager's message for an int names its position in the key
        if k is Ellipsis:
            dim += a.ndim - consumed
        elif k is None or isinstance(k, bool):
            out = shape_ops.unsqueeze(out, dim)
            if k is False:
                out = shape_ops.slice_dim(out, dim, 0, 0)
            dim += 1
        elif _is_int(k):
            size = out.shape[dim]
            check(-size <= k < size, lambda: f"index {k} is out of bounds for dimension {position} with size {size}",
                  IndexError)
            i = k + size if k < 0 else k
            out = prims.squeeze(shape_ops.slice_dim(out, dim, i, i + 1), (dim,))
        elif isinstance(k, slice):
            out = _slice(out, dim, k)
            dim += 1
        else:
            if isinstance(k, list) and _has_elements(out, key):  # eager's message names the position among
                _check_constant_bounds(k, out.shape[dim], len(advanced))  # the advanced indices
            advanced[dim] = _as_index_tensor(k, a.device)
            dim += 1
    if not advanced:
        return out if out is not a else shape_ops.identity(a)
    indices = [None] * (max(advanced) + 1)
    for d, idx in advanced.items():
        indices[d] = idx  # negative entries count from the end: prims.index takes them as PyTorch does
    shape = broadcast_shapes(*[i.shape for i in advanced.values()])
    # an index already of the broadcast shape is used as it is (no copy of it to recompute in backward)
    indices = [i if i is None or tuple(i.shape) == tuple(shape) else shape_ops.broadcast_in_dims_to(i, shape)
               for i in indices]
    return prims.index(out, tuple(indices))


def _slice(a, dim, s: slice):
    size = a.shape[dim]
    step = 1 if s.step is None else s.step
    check(step != 0, "slice step cannot be zero", ValueError)  # Python's own check comes first
    check(step > 0, "step must be greater than zero", ValueError)

    def clamp(x, default):
        if x is None:
            return default
        x = x + size if x < 0 else x
        return min(max(x, 0), size)

    start, stop = clamp(s.start, 0), clamp(s.stop, size)
    stop = max(start, stop)
    if start == 0 and stop == size and step == 1:
        return a
    starts, ends, strides = [0] * a.ndim, list(a.shape), [1] * a.ndim
    starts[dim], ends[dim], strides[dim] = start, stop, step
    return prims.slice(a, starts, ends, strides)


# op -> (the index dtypes it takes, eager's message for another one, given that dtype's name)
_INDEX_DTYPES = {
    "index_select": ((dtypes.int64, dtypes.int32), lambda _: "index_select(): Expected dtype int32 or int64 for index"),
    "gather": ((dtypes.int64, dtypes.int32), lambda _: "gather(): Expected dtype int32/int64 for index"),
    "take_along_dim": ((dtypes.int64,),
                       lambda name: f"torch.take_along_dim(): dtype of indices should be Long but got {name}"),
}


def _check_index_dtype(index, fn_name):
    allowed, message = _INDEX_DTYPES[fn_name]
    check(isinstance(index, TensorProxy) and index.dtype in allowed,
          lambda: message(dtypes.torch_scalar_name(index.dtype) if isinstance(index, TensorProxy) else None))


@torchsymbol(torch.index_select, torch.Tensor.index_select, method="index_select")
def index_select(a, dim, index):
    _check_index_dtype(index, "index_select")
    check(index.ndim <= 1, "index_select(): Index is supposed to be a vector", IndexError)
    dim = canonicalize_dim(a.ndim, dim)
    return prims.take(a, index, dim)


@torchsymbol(torch.gather, torch.Tensor.gather, method="gather")
def gather(a, dim, index, *, sparse_grad=False):
    _check_index_dtype(index, "gather")
    check(index.ndim == a.ndim or (a.ndim == 0 and index.ndim <= 1) or (index.ndim == 0 and a.ndim <= 1),
          "Index tensor must have the same number of dimensions as input tensor")
    dim = canonicalize_dim(a.ndim, dim)
    for d in range(a.ndim):
        check(d == dim or index.shape[d] <= a.shape[d], lambda: f"Size does not match at dimension {d} expected index "
              f"{as_ints(index.shape)} to be no larger than self {as_ints(a.shape)} apart from dimension {dim}")
    # take_along_axis needs equal sizes apart from `dim`: cut the input down to the index.
    starts, ends = [0] * a.ndim, [index.shape[d] if d != dim else a.shape[d] for d in range(a.ndim)]
    if ends != list(a.shape):
        a = prims.slice(a, starts, ends)
    return prims.take_along_axis(a, index, dim)


@torchsymbol(torch.take_along_dim, torch.Tensor.take_along_dim, method="take_along_dim")
def take_along_dim(a, indices, dim=None):
    _check_index_dtype(indices, "take_along_dim")
    if dim is None:
        return prims.take_along_axis(shape_ops.reshape(a, -1), shape_ops.reshape(indices, -1), 0)
    check(a.ndim == indices.ndim, lambda: f"torch.take_along_dim(): input and indices should have the same number of "
          f"dimensions, but got {a.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    dim = canonicalize_dim(a.ndim, dim)
    # Broadcast everything but `dim`.
    a_shape = [1 if d == dim else s for d, s in enumerate(a.shape)]
    i_shape = [1 if d == dim else s for d, s in enumerate(indices.shape)]
    common = list(broadcast_shapes(a_shape, i_shape))
    a_target, i_target = list(common), list(common)
    a_target[dim], i_target[dim] = a.shape[dim], indices.shape[dim]
    return prims.take_along_axis(shape_ops.broadcast_in_dims_to(a, a_target),
                                 shape_ops.broadcast_in_dims_to(indices, i_target), dim)


@torchsymbol(torch.masked_fill, torch.Tensor.masked_fill, method="masked_fill")
def masked_fill(a, mask, value):
    check(isinstance(mask, TensorProxy) and mask.dtype is dtypes.bool8,
          lambda: f"masked_fill_ only supports boolean masks, but got mask with dtype {dtypes.cpp_name(mask.dtype)}")
    if isinstance(value, TensorProxy):
        check(value.ndim == 0, lambda: f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
              f"{value.ndim} dimension(s).")
        value = ew.convert(value, a.dtype)
    elif not dtypes.is_float_dtype(a.dtype) and not dtypes.is_complex_dtype(a.dtype):
        value = int(pyval(value)) if not isinstance(value, NumberProxy) else value  # truncates, as PyTorch does
        if dtypes.is_boolean_dtype(a.dtype):
            value = bool(value)
    mask = shape_ops.broadcast_in_dims_to(mask, shape_ops.expand_shape(mask, a.shape))
    if isinstance(value, TensorProxy):
        value = shape_ops.broadcast_in_dims_to(value, a.shape)
    return prims.where(mask, value, a)


def tri_mask(rows, cols, diagonal, device, lower: bool):
    """Bool (rows, cols) mask of the lower (col - row <= diagonal) or upper (col - row >= diagonal) triangle."""
    r = prims.iota(rows, start=0, step=1, device=device, dtype=dtypes.int64)
    c = prims.iota(cols, start=0, step=1, device=device, dtype=dtypes.int64)
    r = prims.broadcast_in_dim(r, (rows, cols), (0,))
    c = prims.broadcast_in_dim(c, (rows, cols), (1,))
    diff = prims.sub(c, r)
    return prims.le(diff, diagonal) if lower else prims.ge(diff, diagonal)


def _tri(a, diagonal, lower):
    check(a.ndim >= 2, lambda: f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    mask = tri_mask(a.shape[-2], a.shape[-1], diagonal, a.device, lower)
    mask = shape_ops.broadcast_in_dims_to(mask, a.shape)
    zero = False if dtypes.is_boolean_dtype(a.dtype) else 0
    return prims.where(mask, a, zero)


@torchsymbol(torch.tril, torch.Tensor.tril, method="tril")
def tril(a, diagonal=0):
    return _tri(a, diagonal, True)


@torchsymbol(torch.triu, torch.Tensor.triu, method="triu")
def triu(a, diagonal=0):
    return _tri(a, diagonal, False)
