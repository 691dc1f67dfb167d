"""A C++ fast path for the prologue's tensor checks.

PyTorch's ``TensorGuards`` (``torch._C._dynamo.guards``, what ``torch.compile``'s guards run) tests a tensor's exact
class, dispatch keys, dtype, device, requires_grad and sizes in one C++ call: about half of what the same tests cost
as Python attribute reads. It is stricter than the prologue's own check (the exact class, not any Tensor subclass;
the dispatch keys), so the prologue asks it first and falls back to its Python check where it says no: what a cache
entry accepts does not change, only how fast a hit is recognized.

A model's parameters and buffers are many tensors (a GPT layer has 16): one guard per tensor costs a Python call each
(150 ns, 17 us a call for a 6-layer GPT), so the checks of the tensors reached from the callable, its globals and
closures (not the call's arguments, whose checks stay where a miss reports them first) are one TensorGuards call
over all of them (``group_tensor_checks``), with each tensor's Python check where it says no.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes

__all__ = ["tensor_guard", "group_tensor_checks"]

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


def group_tensor_checks(prologue, values: dict):
    """``prologue`` with its guarded checks of tensors with static sizes among ``values`` (proxy name -> the tensor
    traced; the tensors the call's arguments do not hold) as one ``check_tensors`` where the last of them was; the
    prologue itself where there are fewer than two."""
    from thunder.core import prims
    from thunder.core.codegen import ObjectRef
    from thunder.core.symbol import BoundSymbol
    from thunder.core.trace import TraceProvenance, from_trace

    grouped = [k for k, b in enumerate(prologue.bound_symbols)
               if b.sym.id == "prims.check_tensor" and b.args[-1] is not None and b.args[0].name in values
               and all(isinstance(d, int) for d in b.args[1])]
    if len(grouped) < 2 or TensorGuards is None:
        return prologue
    checks = [prologue.bound_symbols[k].args[:-1] for k in grouped]
    try:
        guard = TensorGuards(*(values[c[0].name] for c in checks), dynamic_dims_sizes=[list(c[1]) for c in checks],
                             dynamic_dims_strides=[[None] * len(c[1]) for c in checks])
    except Exception:  # a signature this PyTorch does not have
        return prologue
    group = BoundSymbol(prims.check_tensors, args=(ObjectRef(guard, "tensors_guard"), tuple(checks)), kwargs={},
                        output=None)
    out = from_trace(prologue)
    last, drop = grouped[-1], set(grouped)
    out.bound_symbols = [group if k == last else b for k, b in enumerate(prologue.bound_symbols)
                         if k == last or k not in drop]
    out.provenance = TraceProvenance(f"Tensor checks grouped ({len(checks)} tensors of the callable's state, "
                                     "one TensorGuards call)")
    return out
