"""Tensor conversions: Tensor.to, type_as, float()/long()/..., type(), cpu()/cuda().

They are plain Python over one symbol, ``ltorch.to(a, device=..., dtype=...)``, which is called only when
something changes: converting to the tensor's own dtype and device returns the tensor itself, as in PyTorch.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes, prims
from thunder.core.devices import Device, to_device
from thunder.core.errors import check
from thunder.core.proxies import TensorProxy, torch_function_table
from thunder.torch.registry import register_method, torchsymbol


@torchsymbol(method=())
def to(a, *, device=None, dtype=None):
    out = a
    if dtype is not None:
        out = prims.convert_element_type(out, dtypes.to_dtype(dtype))
    if device is not None:
        out = prims.device_put(out, to_device(device))
    return out


def _is_dtype(x) -> bool:
    return isinstance(x, (dtypes.dtype, torch.dtype))


def _is_device(x) -> bool:
    return isinstance(x, (str, int, torch.device, Device)) and not isinstance(x, bool)


def _torch_device(*args, **kwargs):
    """``torch.device(x.device)``: a proxy's device is a thunder Device, which PyTorch's constructor does not take."""
    if len(args) == 1 and not kwargs and isinstance(args[0], Device):
        return args[0].to_torch()
    return torch.device(*args, **kwargs)


torch_function_table[torch.device] = _torch_device


def _device_of(x) -> Device:
    return to_device(f"cuda:{x}" if isinstance(x, int) else x)


def _convert(a, device=None, dtype=None):
    dtype = dtypes.to_dtype(dtype) if dtype is not None else None
    device = _device_of(device) if device is not None else None
    kw = {}
    if device is not None and device != a.device:
        kw["device"] = device
    if dtype is not None and dtype is not a.dtype:
        kw["dtype"] = dtype
    return to(a, **kw) if kw else a


def _to(a, *args, device=None, dtype=None, non_blocking=False, copy=False, memory_format=None):
    # copy=True is treated as copy=False: traces are functional, so aliasing is not observable in them.
    args = list(args)
    if args and isinstance(args[0], TensorProxy):
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif args and _is_device(args[0]):
        device = args.pop(0)
    if args and _is_dtype(args[0]):
        dtype = args.pop(0)
    if args and isinstance(args[0], bool):  # legacy positional non_blocking, copy
        args = []
    check(not args, lambda: f"to() received an invalid combination of arguments: {args}", TypeError)
    return _convert(a, device, dtype)


register_method("to", _to, torch.Tensor.to)


def type_as(a, other):
    return _convert(a, dtype=other.dtype)


register_method("type_as", type_as, torch.Tensor.type_as)

_DTYPE_METHODS = {
    "float": dtypes.float32, "double": dtypes.float64, "half": dtypes.float16, "bfloat16": dtypes.bfloat16,
    "int": dtypes.int32, "long": dtypes.int64, "short": dtypes.int16, "char": dtypes.int8, "byte": dtypes.uint8,
    "bool": dtypes.bool8, "cfloat": dtypes.complex64, "cdouble": dtypes.complex128,
}


def _dtype_method(dtype):
    def method(a, memory_format=None):
        return _convert(a, dtype=dtype)

    return method


for _name, _dtype in _DTYPE_METHODS.items():
    register_method(_name, _dtype_method(_dtype), getattr(torch.Tensor, _name))

_LEGACY_TYPE_NAMES = {
    dtypes.float32: "FloatTensor", dtypes.float64: "DoubleTensor", dtypes.float16: "HalfTensor",
    dtypes.bfloat16: "BFloat16Tensor", dtypes.int64: "LongTensor", dtypes.int32: "IntTensor",
    dtypes.int16: "ShortTensor", dtypes.int8: "CharTensor", dtypes.uint8: "ByteTensor", dtypes.bool8: "BoolTensor",
    dtypes.complex64: "ComplexFloatTensor", dtypes.complex128: "ComplexDoubleTensor",
}


def _type(a, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:  # the type's name, e.g. 'torch.FloatTensor' (or 'torch.cuda.FloatTensor')
        prefix = "torch.cuda." if a.device.type == "cuda" else "torch."
        return prefix + _LEGACY_TYPE_NAMES[a.dtype]
    if isinstance(dtype, str):
        name = dtype.rpartition(".")[2]
        by_name = {v: k for k, v in _LEGACY_TYPE_NAMES.items()}
        check(name in by_name, lambda: f"invalid type: '{dtype}'", ValueError)
        return _convert(a, device="cuda" if ".cuda." in dtype else a.device, dtype=by_name[name])
    return _convert(a, dtype=dtype)


register_method("type", _type, torch.Tensor.type)
register_method("cpu", lambda a, memory_format=None: _convert(a, device="cpu"), torch.Tensor.cpu)
register_method("cuda", lambda a, device=None, non_blocking=False, memory_format=None: _convert(
    a, device="cuda" if device is None else device), torch.Tensor.cuda)
