"""Turning concrete inputs into proxies."""

from __future__ import annotations

from thunder.core import dtypes
from thunder.core.devices import to_device
from thunder.core.proxies import TensorProxy

__all__ = ["tensor_proxy"]


def tensor_proxy(t, name: str | None = None) -> TensorProxy:
    """A proxy with ``t``'s metadata (shape as Python ints: the default cache bakes shapes in)."""
    return TensorProxy(name, shape=tuple(t.shape), dtype=dtypes.from_torch_dtype(t.dtype), device=to_device(t.device),
                       requires_grad=t.requires_grad)
