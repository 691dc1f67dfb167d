"""What user code sees of a proxy's metadata: eager's objects, not thunder's.

Inside the torch language a proxy's shape is a tuple of ints and IntegerProxies, its dtype a thunder dtype and
its device a thunder Device. User code prints them, formats them into messages, stores them in outside
objects and tests their type, and each of those must go as in eager: ``str(x.shape)`` is
``torch.Size([2, 3])``, ``str(x.dtype)`` is ``torch.float32``. So the interpreter hands the program
``torch.Size``, ``torch.dtype`` and ``torch.device`` (and ``x.size()`` returns a ``torch.Size``).

A shape with symbolic entries cannot be a ``torch.Size`` (which holds ints only): it is a
:class:`SymbolicSize`, a tuple that prints, slices and concatenates like one; printing it needs the sizes'
values, which makes them constraints of the trace as any ``str()`` of a symbolic number does. The epilogue
turns it into a ``torch.Size`` when it leaves the program (returned or stored outside).
"""

from __future__ import annotations

import types

import torch

from thunder.core import dtypes
from thunder.core.devices import Device
from thunder.core.proxies import NumberProxy, TensorProxy

__all__ = ["SymbolicSize", "user_attribute", "user_size"]


class SymbolicSize(tuple):
    """A ``torch.Size`` whose entries may be IntegerProxies."""

    __slots__ = ()
    printed_constructor = ("import torch", "torch.Size")  # how traces print it
    # the interpreter gives ``torch.Size(...) + symbolic_size`` to __radd__ (torch.Size's own __add__ would take
    # the symbolic sizes by value), as CPython does for a subclass
    stands_for = (torch.Size,)

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(d) for d in self)}])"

    __str__ = __repr__

    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return user_size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return user_size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return user_size(tuple(other) + tuple(self))

    def numel(self):
        n = 1
        for d in self:
            n = n * d
        return n


def user_size(shape):
    """``shape`` as eager gives it: a ``torch.Size``, or a :class:`SymbolicSize` while entries are symbolic."""
    if any(isinstance(d, NumberProxy) for d in shape):
        return SymbolicSize(shape)
    return torch.Size(shape)


def _size(self: TensorProxy, dim=None):
    return user_size(self.shape) if dim is None else TensorProxy.size(self, dim)


# attribute name -> what user code gets, from the proxy and the attribute's value
_USER_ATTRIBUTES = {
    "shape": lambda proxy, shape: user_size(shape),
    "dtype": lambda proxy, dtype: dtypes.to_torch_dtype(dtype) if isinstance(dtype, dtypes.dtype) else dtype,
    "device": lambda proxy, device: device.to_torch() if isinstance(device, Device) else device,
    "size": lambda proxy, method: types.MethodType(_size, proxy),
}


def user_attribute(obj, name: str, value):
    """``obj.name`` as user code sees it (``value`` is what the lookup found)."""
    if isinstance(obj, TensorProxy):
        convert = _USER_ATTRIBUTES.get(name)
        if convert is not None:
            return convert(obj, value)
    return value
