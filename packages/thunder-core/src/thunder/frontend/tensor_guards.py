"""A C++ fast path for the prologue's tensor checks.

PyTorch's ``TensorGuards`` (``torch._C._dynamo.guards``, what ``torch.compile``'s guards run) tests a tensor's exact
class, dispatch keys, dtype, device, requires_grad and sizes in one C++ call: about half of what the same tests cost
as Python attribute reads. It is stricter than the prologue's own check (the exact class, not any Tensor subclass;
the dispatch keys), so the prologue asks it first and falls back to its Python check where it says no: what a cache
entry accepts does not change, only how fast a hit is recognized.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes

__all__ = ["tensor_guard"]

_PLAIN = (torch.Tensor, torch.nn.Parameter)

try:
    from torch._C._dynamo.guards import TensorGuards
except ImportError:  # a PyTorch without it: the Python checks alone
    TensorGuards = None


def tensor_guard(value, proxy):
    """A guard accepting only tensors that the prologue's check of ``proxy`` accepts too, built from ``value``, the
    tensor traced; None where PyTorch has no such guard or ``value`` no longer looks as traced (the program changed
    its metadata in place)."""
    # only where the guard's C++ metadata is what the Python check reads: a subclass may answer .shape, .dtype or
    # .device in Python otherwise
    if TensorGuards is None or type(value) not in _PLAIN:
        return None
    # the guard takes class, dispatch keys, dtype, device and requires_grad from the value, the sizes from the proxy
    if (value.dtype is not dtypes.to_torch_dtype(proxy.dtype) or value.device != proxy.device.to_torch()
            or value.requires_grad != proxy.requires_grad or value.ndim != len(proxy.shape)):
        return None
    sizes = [d if isinstance(d, int) else None for d in proxy.shape]  # a symbolic size: unpacked after the check
    try:
        return TensorGuards(value, dynamic_dims_sizes=[sizes], dynamic_dims_strides=[[None] * len(sizes)])
    except Exception:  # a signature this PyTorch does not have
        return None
