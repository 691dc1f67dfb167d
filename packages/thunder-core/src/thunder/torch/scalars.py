"""Tensor -> Python values: metadata queries (``is_complex``), and ``t.item()``, a number computed when
the program runs.

Its value is not known while tracing, so arithmetic on it is recorded (the optimizer's bias
corrections are computed this way) and control flow on it is refused with a clear error.
"""

from __future__ import annotations

import torch

from thunder.core import prims
from thunder.core.dtypes import to_torch_dtype
from thunder.core.proxies import torch_function_table
from thunder.torch.promotion import result_dtypes
from thunder.torch.registry import register_method


def item(a):
    return prims.item(a)


register_method("item", item, torch.Tensor.item)


def is_complex(a) -> bool:
    return a.dtype.kind == "complex"


def is_floating_point(a) -> bool:
    return a.dtype.kind == "float"


def element_size(a) -> int:
    return a.dtype.bytes


register_method("is_complex", is_complex, torch.is_complex, torch.Tensor.is_complex)
register_method("is_floating_point", is_floating_point, torch.is_floating_point, torch.Tensor.is_floating_point)
register_method("element_size", element_size, torch.Tensor.element_size)
# metadata queries the trace fixes (dtype, shape, device): plain values, or sizes where the shape is symbolic
register_method("is_signed", lambda a: a.dtype.signed, torch.is_signed, torch.Tensor.is_signed)
register_method("nelement", lambda a: a.numel(), torch.Tensor.nelement)
register_method("ndimension", lambda a: a.ndim, torch.Tensor.ndimension)
register_method("get_device", lambda a: -1 if a.device.type == "cpu" else (a.device.index or 0),
                torch.Tensor.get_device)
register_method("itemsize", property(element_size))
register_method("nbytes", property(lambda a: a.numel() * a.dtype.bytes))
register_method("layout", property(lambda a: torch.strided))  # the only layout inputs may have (frontend/proxify.py)
torch_function_table[torch.numel] = lambda a: a.numel()


def result_type(tensor, other) -> torch.dtype:
    """``torch.result_type``: the dtype an elementwise op on the two would compute in (fixed by the trace)."""
    return to_torch_dtype(result_dtypes(tensor, other)[0])


torch_function_table[torch.result_type] = result_type


def equal(a, b) -> bool:
    """``torch.equal``: a Python bool read from the data (the program is split there, as for ``bool(t)``). Shapes
    must match exactly, no broadcasting; values compare after type promotion, NaN unequal to itself, as in eager."""
    from thunder.torch.registry import language_symbols

    if tuple(a.shape) != tuple(b.shape):
        return False
    return bool(language_symbols["all"](language_symbols["eq"](a, b)))


register_method("equal", equal, torch.equal, torch.Tensor.equal)


# torch.finfo(x.dtype): a proxy's dtype is a thunder dtype, which PyTorch's constructors do not accept. The limits
# depend on the dtype only, which the trace fixes, so they are plain Python numbers.
def finfo(type=None):
    return torch.finfo() if type is None else torch.finfo(to_torch_dtype(type))


def iinfo(type):
    return torch.iinfo(to_torch_dtype(type))


torch_function_table[torch.finfo] = finfo
torch_function_table[torch.iinfo] = iinfo
