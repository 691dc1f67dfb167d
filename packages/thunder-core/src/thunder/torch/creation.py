"""Tensor creation: full/zeros/ones/empty, arange, the *_like and new_* forms, and torch.tensor.

``empty`` is ``zeros``: traces must be deterministic, and reading uninitialized memory is never meaningful.
"""

from __future__ import annotations

import math

import torch

from thunder.core import dtypes, prims
from thunder.core.devices import cpu, to_device
from thunder.core.errors import check
from thunder.core.proxies import IntegerProxy, NumberProxy, TensorProxy, pyval
from thunder.core.shapes import as_ints, normalize_shape_arg
from thunder.torch.registry import register_method, torchsymbol


def _dtype_of_number(x):
    t = type(pyval(x))
    return {bool: dtypes.bool8, int: dtypes.int64, float: dtypes.float32, complex: dtypes.complex64}[t]


def _device(device):
    return cpu if device is None else to_device(device)


def _full(shape, fill_value, dtype, device):
    shape = tuple(shape)
    for d in shape:
        check(pyval(d) >= 0, lambda: f"Trying to create tensor with negative dimension {d}: {as_ints(shape)}")
    dtype = dtypes.float32 if dtype is None else dtypes.to_dtype(dtype)
    return prims.full(shape, fill_value, device=_device(device), dtype=dtype)


def _check_size_given(name, size) -> None:
    # torch.ones(*()) is eager's TypeError (torch.ones(()) is a 0-d tensor)
    check(len(size) > 0, lambda: f'{name}() missing 1 required positional arguments: "size"', TypeError)


# Keyword arguments that change nothing in a trace (layout, pinning, requires_grad...) are accepted and ignored.


@torchsymbol(torch.zeros, method=())
def zeros(*size, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
    _check_size_given("zeros", size)
    return _full(normalize_shape_arg(size), 0, dtype, device)


@torchsymbol(torch.ones, method=())
def ones(*size, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
    _check_size_given("ones", size)
    return _full(normalize_shape_arg(size), 1, dtype, device)


@torchsymbol(torch.empty, method=())
def empty(*size, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False, memory_format=None):
    _check_size_given("empty", size)
    return _full(normalize_shape_arg(size), 0, dtype, device)


@torchsymbol(torch.full, method=())
def full(size, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
    if dtype is None:
        dtype = _dtype_of_number(fill_value)
    return _full(size, fill_value, dtype, device)


def _like(a, fill_value, dtype, device):
    return _full(a.shape, fill_value, a.dtype if dtype is None else dtype, a.device if device is None else device)


@torchsymbol(torch.zeros_like, method=())
def zeros_like(a, *, dtype=None, device=None, layout=None, requires_grad=False, memory_format=None):
    return _like(a, 0, dtype, device)


@torchsymbol(torch.ones_like, method=())
def ones_like(a, *, dtype=None, device=None, layout=None, requires_grad=False, memory_format=None):
    return _like(a, 1, dtype, device)


@torchsymbol(torch.empty_like, method=())
def empty_like(a, *, dtype=None, device=None, layout=None, requires_grad=False, memory_format=None):
    return _like(a, 0, dtype, device)


@torchsymbol(torch.full_like, method=())
def full_like(a, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False, memory_format=None):
    return _like(a, fill_value, dtype, device)


def _new(fill_value):
    def new(a, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        return _full(normalize_shape_arg(size), fill_value, a.dtype if dtype is None else dtype,
                     a.device if device is None else device)

    return new


# Tensor.new_zeros etc. are plain Python over `full` (they record the prim, with the source tensor's dtype and device).
register_method("new_zeros", _new(0))
register_method("new_ones", _new(1))
register_method("new_empty", _new(0))
register_method("new_full", lambda a, size, fill_value, *, dtype=None, device=None, **_: _full(
    size, fill_value, a.dtype if dtype is None else dtype, a.device if device is None else device))


@torchsymbol(torch.arange, method=())
def arange(start, end=None, step=1, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
    if end is None:
        start, end = 0, start
    check(pyval(step) != 0, "step must be nonzero")
    s, e, st = pyval(start), pyval(end), pyval(step)
    check((st > 0 and e >= s) or (st < 0 and e <= s), "upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(pyval(x), int) for x in (start, end, step))
        dtype = dtypes.int64 if is_int else dtypes.float32
    if all(isinstance(x, (int, IntegerProxy)) and not isinstance(x, bool) for x in (start, end, step)):
        # integer bounds keep their symbolic form: arange(n, n + k) has length k, whatever n is
        length = end - start if _is_one(step) else (end - start + step - (1 if st > 0 else -1)) // step
    else:
        length = math.ceil((e - s) / st)
    return prims.iota(length, start=start, step=step, device=_device(device), dtype=dtypes.to_dtype(dtype))


def _is_one(x) -> bool:
    return type(x) is int and x == 1


def _nested_shape(data) -> tuple:
    if isinstance(data, (list, tuple)):
        inner = [_nested_shape(x) for x in data]
        check(all(s == inner[0] for s in inner), "expected sequence of equal length lists", ValueError)
        return (len(data),) + (inner[0] if inner else ())
    return ()


def _flat(data) -> list:
    return [y for x in data for y in _flat(x)] if isinstance(data, (list, tuple)) else [data]


def constant_tensor(data, dtype=None, device=None):
    """A tensor of the (nested) Python numbers ``data``: one full(...) per element, then cat and reshape."""
    shape, values = _nested_shape(data), _flat(data)
    for v in values:
        check(isinstance(v, (bool, int, float, complex, NumberProxy)),
              lambda: f"Could not infer dtype of {type(v).__name__}", TypeError)
    if dtype is None:
        kinds = {type(pyval(v)) for v in values}
        dtype = next((d for t, d in ((complex, dtypes.complex64), (float, dtypes.float32), (int, dtypes.int64))
                      if t in kinds), dtypes.bool8 if kinds else dtypes.float32)
    dtype, device = dtypes.to_dtype(dtype), _device(device)
    if not shape:
        return prims.full((), values[0], device=device, dtype=dtype)
    pieces = [prims.full((1,), v, device=device, dtype=dtype) for v in values]
    flat = prims.cat(pieces, 0) if pieces else prims.full((0,), 0, device=device, dtype=dtype)
    return prims.reshape(flat, shape) if len(shape) > 1 else flat


@torchsymbol(torch.tensor, method=())
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    check(not isinstance(data, TensorProxy), "torch.tensor(a_tensor) is not supported; use a.clone() or a.detach()",
          NotImplementedError)
    return constant_tensor(data, dtype, device)
