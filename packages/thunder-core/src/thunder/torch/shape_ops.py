"""Shape operations: views, reshapes, permutations, broadcasting, splitting and joining.

All of them decompose into the shape prims (reshape, transpose, broadcast_in_dim, slice, squeeze, cat).
"""

from __future__ import annotations

import torch

from thunder.core import prims
from thunder.core.errors import UnsupportedError, check, user_location_suffix
from thunder.core.proxies import IntegerProxy, TensorProxy
from thunder.core.shapes import as_ints, canonicalize_dim, canonicalize_dims, normalize_shape_arg, numel
from thunder.core.trace import get_tracectx
from thunder.torch.promotion import promote_types
from thunder.torch.registry import register_method, torchsymbol


def _is_int(x) -> bool:
    return isinstance(x, (int, IntegerProxy)) and not isinstance(x, bool)


def infer_shape(a: TensorProxy, shape) -> tuple:
    """``shape`` with its one -1 entry inferred from ``a``'s numel, as view/reshape do."""
    shape = tuple(shape)
    for d in shape:
        check(_is_int(d), lambda: f"shape must be a sequence of ints, got {shape}", TypeError)
    holes = [i for i, d in enumerate(shape) if d == -1]
    check(len(holes) <= 1, "only one dimension can be inferred")
    for d in shape:
        check(d >= -1, lambda: f"invalid shape dimension {d}")
    if holes:
        known = numel([d for d in shape if d != -1])
        total = a.numel()
        check(known != 0 or total != 0, lambda: f"cannot reshape tensor of 0 elements into shape {as_ints(shape)} "
              "because the unspecified dimension size -1 can be any value and is ambiguous")
        check(known != 0 and total % known == 0,
              lambda: f"shape '{as_ints(shape)}' is invalid for input of size {total}")
        shape = shape[: holes[0]] + (total // known,) + shape[holes[0] + 1:]
    check(numel(shape) == a.numel(), lambda: f"shape '{as_ints(shape)}' is invalid for input of size {a.numel()}")
    return shape


def _reshape(a, shape):
    return prims.reshape(a, infer_shape(a, shape))


def identity(a):
    # Symbols must produce fresh proxies: a no-op reshape still records one prim.
    return prims.reshape(a, a.shape)


@torchsymbol(torch.reshape, torch.Tensor.reshape, method="reshape")
def reshape(a, *shape):
    shape = normalize_shape_arg(shape)
    return _reshape(a, shape)


@torchsymbol(torch.Tensor.view, method="view")
def view(a, *shape):
    check(not (len(shape) == 1 and not isinstance(shape[0], (tuple, list)) and not _is_int(shape[0])),
          "Tensor.view(dtype) (reinterpreting bits) is not supported yet", NotImplementedError)
    return _reshape(a, normalize_shape_arg(shape))


@torchsymbol(torch.Tensor.view_as, method="view_as")
def view_as(a, other):
    return _reshape(a, other.shape)


@torchsymbol(torch.Tensor.reshape_as, method="reshape_as")
def reshape_as(a, other):
    return _reshape(a, other.shape)


@torchsymbol(torch.flatten, torch.Tensor.flatten, method="flatten")
def flatten(a, start_dim=0, end_dim=-1):
    if a.ndim == 0:
        return prims.reshape(a, (1,))
    s, e = canonicalize_dim(a.ndim, start_dim), canonicalize_dim(a.ndim, end_dim)
    check(s <= e, "flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(a.shape[:s]) + (numel(a.shape[s:e + 1]),) + tuple(a.shape[e + 1:])
    return prims.reshape(a, shape)


def _flatten_method(a, start_dim=0, end_dim=-1):
    # eager returns the tensor itself when there is nothing to flatten (the same object: identity, requires_grad)
    if a.ndim and canonicalize_dim(a.ndim, start_dim) == canonicalize_dim(a.ndim, end_dim):
        return a
    return flatten(a, start_dim, end_dim)


register_method("flatten", _flatten_method, torch.flatten, torch.Tensor.flatten)


@torchsymbol(torch.unflatten, torch.Tensor.unflatten, method="unflatten")
def unflatten(a, dim, sizes):
    dim = canonicalize_dim(a.ndim, dim)
    sizes = tuple(sizes)
    check(len(sizes) > 0, "unflatten: sizes must be non-empty", RuntimeError)
    holes = [i for i, s in enumerate(sizes) if s == -1]
    check(len(holes) <= 1, "only one dimension can be inferred")
    if holes:
        known = numel([s for s in sizes if s != -1])
        sizes = sizes[: holes[0]] + (a.shape[dim] // known,) + sizes[holes[0] + 1:]
    check(numel(sizes) == a.shape[dim], lambda: f"unflatten: Provided sizes {as_ints(sizes)} don't multiply up to the "
          f"size of dim {dim} ({a.shape[dim]}) in the input tensor")
    return prims.reshape(a, tuple(a.shape[:dim]) + sizes + tuple(a.shape[dim + 1:]))


@torchsymbol(torch.permute, torch.Tensor.permute, method="permute")
def permute(a, *dims):
    dims = normalize_shape_arg(dims)
    check(len(dims) == a.ndim, lambda: f"permute(): number of dimensions in the tensor input does not match the length "
          f"of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not equal to len(dims) = {len(dims)}")
    dims = canonicalize_dims(a.ndim, dims)
    check(len(set(dims)) == len(dims), "permute(): duplicate dims are not allowed.")
    return prims.transpose(a, dims)


def _swap(ndim, d0, d1) -> tuple:
    perm = list(range(ndim))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return tuple(perm)


@torchsymbol(torch.transpose, torch.swapaxes, torch.swapdims, torch.Tensor.transpose, torch.Tensor.swapaxes,
             torch.Tensor.swapdims, method=("transpose", "swapaxes", "swapdims"))
def transpose(a, dim0, dim1):
    if a.ndim == 0:
        canonicalize_dims(0, (dim0, dim1))
        return identity(a)
    d0, d1 = canonicalize_dims(a.ndim, (dim0, dim1))
    return prims.transpose(a, _swap(a.ndim, d0, d1))


@torchsymbol(torch.t, torch.Tensor.t, method="t")
def t(a):
    check(a.ndim <= 2, lambda: f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return transpose(a, 0, 1) if a.ndim == 2 else identity(a)


def _mT(a):
    check(a.ndim >= 2, lambda: f"tensor.mT is only supported on matrices or batches of matrices. Got {a.ndim}-D tensor.")
    return transpose(a, -2, -1)


def _T(a):
    return permute(a, tuple(reversed(range(a.ndim))))


# Properties: TensorProxy.__getattr__ binds these with __get__, which for a property yields the value.
register_method("mT", property(_mT))
register_method("T", property(_T))


@torchsymbol(torch.unsqueeze, torch.Tensor.unsqueeze, method="unsqueeze")
def unsqueeze(a, dim):
    dim = canonicalize_dim(a.ndim + 1, dim)
    shape = tuple(a.shape[:dim]) + (1,) + tuple(a.shape[dim:])
    return prims.broadcast_in_dim(a, shape, tuple(i for i in range(a.ndim + 1) if i != dim))


@torchsymbol(torch.squeeze, torch.Tensor.squeeze, method="squeeze")
def squeeze(a, dim=None):
    if dim is None:
        dims = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        dims = canonicalize_dims(a.ndim, dim)  # validates; a 0-d tensor accepts dims 0 and -1
        dims = tuple(d for d in dict.fromkeys(dims) if a.ndim and a.shape[d] == 1)
    return prims.squeeze(a, dims) if dims else identity(a)


def expand_shape(a, sizes) -> tuple:
    sizes = tuple(sizes)
    check(len(sizes) >= a.ndim, lambda: f"expand(torch.FloatTensor{{{as_ints(a.shape)}}}, size=[{', '.join(map(str, sizes))}]): "
          f"the number of sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
          f"tensor ({a.ndim})")
    offset = len(sizes) - a.ndim
    out = []
    for i in reversed(range(len(sizes))):  # from the last dimension, as PyTorch checks (its first error is ours)
        s = sizes[i]
        if i < offset:
            check(s >= 0, lambda: f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                  f"non-existing dimension {i}")
            out.append(s)
            continue
        d = a.shape[i - offset]
        if s == -1:
            out.append(d)
            continue
        check(d == 1 or d == s, lambda: f"The expanded size of the tensor ({s}) must match the existing size ({d}) at "
              f"non-singleton dimension {i}.  Target sizes: {as_ints(sizes)}.  Tensor sizes: {as_ints(a.shape)}")
        out.append(s)
    return tuple(reversed(out))


def broadcast_in_dims_to(a, shape):
    """``a`` broadcast to ``shape`` (leading dims added); a fresh proxy even when nothing changes."""
    shape = tuple(shape)
    if shape == tuple(a.shape):
        return identity(a)
    offset = len(shape) - a.ndim
    return prims.broadcast_in_dim(a, shape, tuple(range(offset, len(shape))))


@torchsymbol(torch.Tensor.expand, method="expand")
def expand(a, *sizes):
    return broadcast_in_dims_to(a, expand_shape(a, normalize_shape_arg(sizes)))


@torchsymbol(torch.Tensor.expand_as, method="expand_as")
def expand_as(a, other):
    return broadcast_in_dims_to(a, expand_shape(a, other.shape))


@torchsymbol(torch.broadcast_to, torch.Tensor.broadcast_to, method="broadcast_to")
def broadcast_to(a, size):
    return broadcast_in_dims_to(a, expand_shape(a, size))


@torchsymbol(torch.Tensor.contiguous, method="contiguous")
def contiguous(a, memory_format=None):
    # The tensor itself when it is contiguous, else a copy: which one, functionalization decides from the
    # strides when an in-place update makes it matter (thunder.transforms.layouts).
    return identity(a)


def _contiguous_method(a, memory_format=torch.contiguous_format):
    # eager returns the tensor itself when it is contiguous (the same object: identity, requires_grad, a leaf)
    layouts = get_tracectx().layouts
    if memory_format is torch.contiguous_format and layouts is not None and layouts.is_contiguous_for_every_call(a):
        return a
    return contiguous(a) if memory_format is torch.contiguous_format else contiguous(a, memory_format=memory_format)


register_method("contiguous", _contiguous_method, torch.Tensor.contiguous)


def _is_contiguous(a, memory_format=torch.contiguous_format):
    # answered from the strides the jit knows (an input, what is computed from known tensors), as eager would
    layouts = get_tracectx().layouts
    answer = layouts.is_contiguous(a) if layouts is not None and memory_format is torch.contiguous_format else None
    if answer is None:
        raise UnsupportedError(
            f"Tensor.is_contiguous(){user_location_suffix()}: thunder.jit does not know the strides of this tensor (made "
            "by a call it cannot replay on the meta device, or asked with a memory_format); rewrite the code without it"
        )
    return answer


register_method("is_contiguous", _is_contiguous, torch.Tensor.is_contiguous)


def _layout_answer(a, question: str, **kwargs):
    """The layout model's answer to ``question`` about ``a`` (transforms/layouts.py), as eager's; refused where the
    jit does not know ``a``'s layout."""
    layouts = get_tracectx().layouts
    answer = getattr(layouts, question)(a, **kwargs) if layouts is not None else None
    if answer is None:
        raise UnsupportedError(
            f"Tensor.{question}(){user_location_suffix()}: thunder.jit does not know the layout of this tensor (made "
            "by a call it cannot replay on the meta device); rewrite the code without it"
        )
    return answer


def _stride(a, dim=None):
    strides = _layout_answer(a, "strides")
    return strides if dim is None else strides[canonicalize_dim(a.ndim, dim)]


register_method("stride", _stride, torch.Tensor.stride)
register_method("storage_offset", lambda a: _layout_answer(a, "storage_offset"), torch.Tensor.storage_offset)
register_method("dim_order", lambda a, **kwargs: _layout_answer(a, "dim_order", **kwargs), torch.Tensor.dim_order)
register_method("is_inference", lambda a: _layout_answer(a, "is_inference"), torch.Tensor.is_inference)


def slice_dim(a, dim, start, stop):
    starts = [0] * a.ndim
    ends = list(a.shape)
    starts[dim], ends[dim] = start, stop
    return prims.slice(a, starts, ends)


@torchsymbol(torch.split, torch.Tensor.split, method="split")
def split(a, split_size_or_sections, dim=0):
    dim = canonicalize_dim(a.ndim, dim)
    length = a.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = list(split_size_or_sections)
        check(sum(sizes) == length, lambda: f"split_with_sizes expects split_sizes to sum exactly to {length} (input "
              f"tensor's size at dimension {dim}), but got split_sizes={sizes}")
    else:
        size = split_size_or_sections
        check(size > 0 or length == 0, lambda: f"split_size can only be 0 if dimension size is 0, but got dimension "
              f"size of {length}")
        # an empty dim splits into one empty piece, whatever the size
        sizes = [size] * (length // size) + ([length % size] if length % size else []) if length != 0 else [0]
    out, start = [], 0
    for s in sizes:
        out.append(slice_dim(a, dim, start, start + s))
        start = start + s
    return tuple(out)


@torchsymbol(torch.chunk, torch.Tensor.chunk, method="chunk")
def chunk(a, chunks, dim=0):
    check(chunks > 0, lambda: f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = canonicalize_dim(a.ndim, dim)
    length = a.shape[dim]
    size = (length + chunks - 1) // chunks
    if size == 0:  # torch returns `chunks` empty pieces of a zero-length dim
        return tuple(slice_dim(a, dim, 0, 0) for _ in range(chunks))
    return split(a, size, dim)


@torchsymbol(torch.tensor_split, torch.Tensor.tensor_split, method="tensor_split")
def tensor_split(a, indices_or_sections, dim=0):
    dim = canonicalize_dim(a.ndim, dim)
    length = a.shape[dim]
    if isinstance(indices_or_sections, (list, tuple)):
        bounds = [0, *indices_or_sections, length]
        bounds = [min(max(b if b >= 0 else b + length, 0), length) for b in bounds]
    else:
        n = indices_or_sections
        check(n > 0, lambda: f"number of sections must be larger than 0, got {n}")
        q, r = divmod(length, n)
        bounds = [0]
        for i in range(n):
            bounds.append(bounds[-1] + q + (1 if i < r else 0))
    return tuple(slice_dim(a, dim, s, max(s, e)) for s, e in zip(bounds[:-1], bounds[1:]))


def _check_tensor_list(tensors, fn_name):
    check(isinstance(tensors, (list, tuple)), lambda: f"{fn_name}(): argument 'tensors' must be tuple of Tensors, "
          f"not {type(tensors).__name__}", TypeError)
    check(len(tensors) > 0, lambda: f"{fn_name}(): expected a non-empty list of Tensors",
          ValueError if fn_name == "torch.cat" else RuntimeError)
    for t_ in tensors:
        check(isinstance(t_, TensorProxy), lambda: f"expected Tensor as element in argument 0, but got "
              f"{type(t_).__name__}", TypeError)


@torchsymbol(torch.cat, torch.concat, torch.concatenate, method=())
def cat(tensors, dim=0):
    _check_tensor_list(tensors, "torch.cat")
    for i, t_ in enumerate(tensors):
        check(t_.ndim > 0, lambda: f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = tensors[0].dtype
    for t_ in tensors[1:]:
        dtype = promote_types(dtype, t_.dtype)
    from thunder.torch.elementwise import convert

    # PyTorch's legacy rule: 1-D empty tensors (``torch.tensor([])``, the start of transformers' key/value cache)
    # are skipped whatever the other tensors' rank; they still take part in type promotion.
    joined = [t_ for t_ in tensors if not _is_legacy_empty(t_)] or [tensors[0]]
    return prims.cat([convert(t_, dtype) for t_ in joined], dim)


def _is_legacy_empty(t) -> bool:
    return t.ndim == 1 and t.shape[0] == 0


@torchsymbol(torch.stack, method=())
def stack(tensors, dim=0):
    _check_tensor_list(tensors, "stack")
    shape = tensors[0].shape
    for i, t_ in enumerate(tensors):
        check(t_.shape == shape, lambda: f"stack expects each tensor to be equal size, but got {as_ints(shape)} at entry 0 "
              f"and {as_ints(t_.shape)} at entry {i}")
    dim = canonicalize_dim(len(shape) + 1, dim)
    return cat([unsqueeze(t_, dim) for t_ in tensors], dim)


@torchsymbol(torch.movedim, torch.moveaxis, torch.Tensor.movedim, torch.Tensor.moveaxis, method=("movedim", "moveaxis"))
def movedim(a, source, destination):
    src = canonicalize_dims(a.ndim, source)
    dst = canonicalize_dims(a.ndim, destination)
    check(len(src) == len(dst), lambda: f"movedim: Invalid source or destination dims: source ({as_ints(src)} dims) "
          f"should contain the same number of dims as destination ({as_ints(dst)} dims)")
    check(len(set(src)) == len(src), lambda: f"movedim: repeated dim in `source` ({as_ints(source)})")
    check(len(set(dst)) == len(dst), lambda: f"movedim: repeated dim in `destination` ({as_ints(destination)})")
    perm = [-1] * a.ndim
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(a.ndim) if i not in src)
    perm = [p if p != -1 else next(rest) for p in perm]
    return prims.transpose(a, tuple(perm))


def _len(a):
    check(a.ndim > 0, "len() of a 0-d tensor", TypeError)
    return a.shape[0]


register_method("__len__", _len)


@torchsymbol(torch.repeat_interleave, torch.Tensor.repeat_interleave, method="repeat_interleave")
def repeat_interleave(a, repeats=None, dim=None, *, output_size=None):
    """A number of repeats: each element repeated in place (broadcast along a new dim, then merged), so symbolic
    sizes stay symbolic (litgpt's grouped-query heads). Tensor repeats make a data-dependent size: one opaque
    PyTorch call, which needs ``output_size`` (read from the repeats at the call when the program does not pass
    it, torch/data_dependent.py)."""
    if not _is_int(repeats):
        from thunder.core.errors import UnsupportedError, user_location_suffix
        from thunder.torch.opaque import call_opaque

        if output_size is None:
            raise UnsupportedError(
                f"repeat_interleave with tensor repeats is not supported by thunder without output_size"
                f"{user_location_suffix()}: the output's size depends on the values of repeats, which are not known "
                "while tracing; pass output_size=int(repeats.sum()) or compute it outside the jitted function"
            )

        if repeats is None:  # repeat_interleave(repeats) has no dim
            return call_opaque(torch.repeat_interleave, (a,), {"output_size": output_size})
        return call_opaque(torch.repeat_interleave, (a, repeats), {"dim": dim, "output_size": output_size})
    check(repeats >= 0, "repeats can not be negative", RuntimeError)
    if dim is None:
        a, dim = reshape(a, (a.numel(),)), 0
    dim = canonicalize_dim(a.ndim, dim)
    shape = tuple(a.shape)
    expanded = prims.broadcast_in_dim(a, (*shape[: dim + 1], repeats, *shape[dim + 1:]),
                                      tuple(i for i in range(a.ndim + 1) if i != dim + 1))
    return reshape(expanded, (*shape[:dim], shape[dim] * repeats, *shape[dim + 1:]))
