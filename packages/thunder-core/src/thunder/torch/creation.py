"""Tensor creation: full/zeros/ones/empty, arange, linspace/logspace, eye, the *_like and new_* forms, and
torch.tensor. Sizes may be symbolic (``torch.eye(x.shape[0])`` under symbolic values).

``empty`` is ``zeros``: traces must be deterministic, and reading uninitialized memory is never meaningful.
"""

from __future__ import annotations

import math

import torch

from thunder.core import dtypes, prims
from thunder.core.devices import cpu, to_device
from thunder.core.errors import check
from thunder.core.proxies import IntegerProxy, NumberProxy, TensorProxy, pyval, torch_function_table
from thunder.core.shapes import as_ints, normalize_shape_arg
from thunder.torch import elementwise as ew
from thunder.torch.promotion import default_complex_dtype, default_float_dtype, python_number_dtype
from thunder.torch.registry import register_method, torchsymbol


def _dtype_of_number(x):
    return python_number_dtype(type(pyval(x)))


def _device(device):
    return cpu if device is None else to_device(device)


def _read_sizes(shape: tuple) -> tuple:
    """``shape`` with each size computed from tensor data (``t.item()``) read: the program is split there (a
    symbolic number under cache="symbolic values"), so no tensor is shaped by a number with no value. Inside a
    torch-language function the function's caller reads it (Symbol.__call__)."""
    if not any(isinstance(d, NumberProxy) and d.data_dependent for d in shape):
        return shape
    from thunder.core.errors import ReadInsideRegionError
    from thunder.core.trace import get_tracectx

    trace = get_tracectx()
    reader = getattr(trace, "value_reader", None)
    if reader is None or trace.decomposing:
        raise ReadInsideRegionError("a size computed from tensor data is read by the caller")
    return tuple(reader.read_number(d, "an argument of full") if isinstance(d, NumberProxy) and d.data_dependent
                 else d for d in shape)


def _full(shape, fill_value, dtype, device, negative_size_message=None):
    shape = _read_sizes(tuple(shape))
    for d in shape:
        # compared as a number of the trace: a symbolic size gets a constraint, so a later negative one raises
        check(d >= 0, negative_size_message or (
            lambda: f"Trying to create tensor with negative dimension {pyval(d)}: {as_ints(shape)}"))
    dtype = default_float_dtype() if dtype is None else dtypes.to_dtype(dtype)
    return prims.full(shape, fill_value, device=_device(device), dtype=dtype)


def _check_size_given(name, size) -> None:
    # torch.ones(*()) is eager's TypeError (torch.ones(()) is a 0-d tensor)
    check(len(size) > 0, lambda: f'{name}() missing 1 required positional arguments: "size"', TypeError)


# Keyword arguments that change nothing in a trace (layout, pinning, requires_grad...) are accepted and ignored.


@torchsymbol(torch.zeros, method=())
def zeros(*size, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
    _check_size_given("zeros", size)
    return _full(normalize_shape_arg(size), 0, dtype, device, "zeros: Dimension size must be non-negative.")


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
register_method("new_zeros", _new(0), torch.Tensor.new_zeros)
register_method("new_ones", _new(1), torch.Tensor.new_ones)
register_method("new_empty", _new(0), torch.Tensor.new_empty)
register_method("new_full", lambda a, size, fill_value, *, dtype=None, device=None, **_: _full(
    size, fill_value, a.dtype if dtype is None else dtype, a.device if device is None else device),
    torch.Tensor.new_full)


@torchsymbol(torch.arange, method=())
def arange(start, end=None, step=1, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
    if end is None:
        start, end = 0, start
    # the checks compare the numbers of the trace: constraints on symbolic ones
    check(step != 0, "step must be nonzero")
    check((step > 0 and end >= start) or (step < 0 and end <= start),
          "upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(pyval(x), int) for x in (start, end, step))
        dtype = dtypes.int64 if is_int else default_float_dtype()
    if all(isinstance(x, (int, IntegerProxy)) and not isinstance(x, bool) for x in (start, end, step)):
        # integer bounds keep their symbolic form: arange(n, n + k) has length k, whatever n is
        length = end - start if _is_one(step) else (end - start + step - (1 if step > 0 else -1)) // step
    else:  # a number of the trace too (eager computes it in double precision, as Python does)
        length = math.ceil((end - start) / step)
    return prims.iota(length, start=start, step=step, device=_device(device), dtype=dtypes.to_dtype(dtype))


def _count(steps, what) -> None:
    check(isinstance(steps, (int, IntegerProxy)) and not isinstance(steps, bool),
          lambda: f"{what}(): argument 'steps' must be int, not {type(steps).__name__}", TypeError)
    check(steps >= 0, "number of steps must be non-negative")


def _linspace(start, end, steps, dtype, device):
    """``steps`` values from ``start`` to ``end`` as PyTorch's kernel computes them, in its step type (float64
    for integer dtypes, else ``dtype``): the ends are first converted to ``dtype``; the first half counts up
    from ``start``, the second half down from ``end``, so both ends are exact."""
    step_dtype = dtypes.float64 if not (dtypes.is_float_dtype(dtype) or dtypes.is_complex_dtype(dtype)) else dtype
    start = ew.convert(prims.full((), start, device=device, dtype=dtype), step_dtype)
    end = ew.convert(prims.full((), end, device=device, dtype=dtype), step_dtype)
    if steps == 1:  # on a symbolic count, a branch the prologue checks (as is ``steps > 1`` below)
        return prims.broadcast_in_dim(start, (1,), ())
    idx = ew.convert(prims.iota(steps, start=0, step=1, device=device, dtype=dtypes.int64), step_dtype)
    step = ew.div(ew.sub(end, start), steps - 1) if steps > 1 else start
    up = ew.add(start, ew.mul(step, idx))
    down = ew.sub(end, ew.mul(step, ew.sub(steps - 1, idx)))
    return ew.where(ew.lt(idx, steps // 2), up, down)


def _float_dtype(dtype, *values):
    if dtype is not None:
        return dtypes.to_dtype(dtype)
    if any(isinstance(pyval(x), complex) for x in values):
        return default_complex_dtype()
    return default_float_dtype()


@torchsymbol(torch.linspace, method=())
def linspace(start, end, steps, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
    _count(steps, "linspace")
    dtype = _float_dtype(dtype, start, end)
    return ew.convert(_linspace(start, end, steps, dtype, _device(device)), dtype)


@torchsymbol(torch.logspace, method=())
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, layout=None, requires_grad=False,
             pin_memory=False):
    _count(steps, "logspace")
    dtype = _float_dtype(dtype, start, end)
    # PyTorch raises the (double) base to the exponents in double precision, then converts
    compute = dtypes.complex128 if dtypes.is_complex_dtype(dtype) else dtypes.float64
    exponents = ew.convert(_linspace(start, end, steps, dtype, _device(device)), compute)
    return ew.convert(ew.pow(base, exponents), dtype)


@torchsymbol(torch.eye, method=())
def eye(n, m=None, *, dtype=None, device=None, layout=None, requires_grad=False, pin_memory=False):
    m = n if m is None else m
    for k, name in ((n, "n"), (m, "m")):
        check(isinstance(k, (int, IntegerProxy)) and not isinstance(k, bool),
              lambda: f"eye(): argument '{name}' must be int, not {type(k).__name__}", TypeError)
        check(k >= 0, lambda: f"{name} must be greater or equal to 0, got {pyval(k)}")
    device = _device(device)
    rows = prims.iota(n, start=0, step=1, device=device, dtype=dtypes.int64)
    cols = prims.iota(m, start=0, step=1, device=device, dtype=dtypes.int64)
    diagonal = ew.eq(prims.broadcast_in_dim(rows, (n, m), (0,)), prims.broadcast_in_dim(cols, (n, m), (1,)))
    return ew.convert(diagonal, default_float_dtype() if dtype is None else dtypes.to_dtype(dtype))


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
    """A tensor of the (nested) Python numbers ``data``: one full(...) per element, then cat and reshape. A 0-d
    tensor among them counts as its value (``torch.tensor([x.sum(), x.mean()])``), detached, as in eager."""
    shape, values = _nested_shape(data), _flat(data)
    for v in values:
        check(isinstance(v, (bool, int, float, complex, NumberProxy)) or (isinstance(v, TensorProxy) and v.ndim == 0),
              lambda: f"Could not infer dtype of {type(v).__name__}" if not isinstance(v, TensorProxy) else
              "torch.tensor of a list holding tensors of one or more dimensions is not supported; use torch.stack",
              TypeError if not isinstance(v, TensorProxy) else NotImplementedError)
    if dtype is None:
        numbers = {type(pyval(v)) for v in values if not isinstance(v, TensorProxy)}
        kind = next((t for t in (complex, float, int, bool) if t in numbers), None)
        # eager promotes the tensors' dtypes with the numbers' default ones (an int64 tensor and 2.5: float32)
        found = [python_number_dtype(kind)] if kind is not None else []
        found += [v.dtype for v in values if isinstance(v, TensorProxy)]
        dtype = found[0] if found else python_number_dtype(float)  # [] is a float tensor
        for d in found[1:]:
            dtype = dtypes.from_torch_dtype(torch.promote_types(dtypes.to_torch_dtype(dtype), dtypes.to_torch_dtype(d)))
    dtype, device = dtypes.to_dtype(dtype), _device(device)
    if not shape:
        return _element(values[0], (), device, dtype)
    pieces = [_element(v, (1,), device, dtype) for v in values]
    flat = prims.cat(pieces, 0) if pieces else prims.full((0,), 0, device=device, dtype=dtype)
    return prims.reshape(flat, shape) if len(shape) > 1 else flat


def _element(v, shape, device, dtype):
    if not isinstance(v, TensorProxy):
        return prims.full(shape, v, device=device, dtype=dtype)
    from thunder.torch.registry import language_symbols

    v = ew.convert(language_symbols["detach"](v), dtype)
    v = v if v.device == device else prims.device_put(v, device)
    return prims.reshape(v, shape)


@torchsymbol(torch.tensor, method=())
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, TensorProxy):  # a copy, detached (eager warns to write a.clone().detach())
        from thunder.torch.registry import language_symbols

        copy = language_symbols["clone"](language_symbols["detach"](data))
        return copy if dtype is None and device is None else copy.to(device=device, dtype=dtype)
    return constant_tensor(data, dtype, device)


def as_tensor(data, dtype=None, device=None):
    # a tensor is itself, converted only where asked (eager copies nothing then); other data as torch.tensor's
    if isinstance(data, TensorProxy):
        return data if dtype is None and device is None else data.to(device=device, dtype=dtype)
    return constant_tensor(data, dtype, device)


torch_function_table[torch.as_tensor] = as_tensor


def _new_tensor(a, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    check(not isinstance(data, TensorProxy), "x.new_tensor(a_tensor) is not supported; use a.clone() or a.detach()",
          NotImplementedError)
    return constant_tensor(data, a.dtype if dtype is None else dtype, a.device if device is None else device)


register_method("new_tensor", _new_tensor, torch.Tensor.new_tensor)


def _legacy_constructor(dtype):
    """``torch.Tensor(2, 3)`` / ``torch.LongTensor([1, 2])``: integers are a size (uninitialized memory in
    eager, zeros here), a sequence is data; no argument is an empty tensor."""

    def construct(*args, device=None):
        check(not any(isinstance(a, TensorProxy) for a in args),
              "torch.Tensor(a_tensor) is not supported; use a.clone() or a.detach()", NotImplementedError)
        if not args:
            return _full((0,), 0, dtype, device)
        if len(args) == 1 and isinstance(args[0], (list, tuple)) and not isinstance(args[0], torch.Size):
            return tensor(args[0], dtype=dtype, device=device)
        return _full(normalize_shape_arg(args), 0, dtype, device)

    return construct


torch_function_table[torch.Tensor] = _legacy_constructor(dtypes.float32)
for _name in ("BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor",
              "IntTensor", "LongTensor", "ShortTensor"):
    _legacy = getattr(torch, _name)
    torch_function_table[_legacy] = _legacy_constructor(dtypes.to_dtype(_legacy.dtype))
