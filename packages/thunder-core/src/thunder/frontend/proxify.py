"""Turning concrete inputs into proxies."""

from __future__ import annotations

import torch

from thunder.core import dtypes
from thunder.core.devices import to_device
from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.proxies import TensorProxy

__all__ = ["tensor_proxy"]


def _unlike_dense(t) -> str | None:
    """What makes ``t`` other than a dense strided tensor, whose metadata a proxy describes; None if nothing.
    Traces compute as for dense tensors (``x.is_sparse`` is False, softmax decomposes densely), so such a tensor
    would silently get dense answers."""
    if t.is_nested:
        return "a nested tensor"
    if t.layout is not torch.strided:
        return f"a tensor of layout {t.layout}"
    if t.is_quantized:
        return f"a quantized tensor ({t.dtype})"
    return None


def tensor_proxy(t, name: str | None = None) -> TensorProxy:
    """A proxy with ``t``'s metadata (shape as Python ints: the default cache bakes shapes in)."""
    unlike = _unlike_dense(t)
    if unlike is not None:
        raise UnsupportedError(
            f"thunder traces dense strided tensors, and the input {name or ''} is {unlike}{user_location_suffix()}: "
            "convert it before the jitted call (.to_dense(), .dequantize(), .to_padded_tensor(0)) or run this code "
            "outside thunder.jit")
    return TensorProxy(name, shape=tuple(t.shape), dtype=dtypes.from_torch_dtype(t.dtype), device=to_device(t.device),
                       requires_grad=t.requires_grad)
