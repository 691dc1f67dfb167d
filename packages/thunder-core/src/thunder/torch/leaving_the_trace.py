"""Tensor methods and attributes whose result would leave the trace: a NumPy array sharing the tensor's memory, the
memory's address, an autograd node. Refused with the reason and what to do, rather than failing inside PyTorch's
meta run (the opaque fallback's) with an error about meta tensors."""

from __future__ import annotations

from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.proxies import tensor_methods

__all__ = ["REFUSED"]

# name -> (why, what to do instead)
REFUSED = {
    "numpy": ("it hands the tensor's memory to NumPy, whose computations thunder cannot trace",
              "compute with torch ops, read the values as Python numbers with .tolist(), or call it outside the jitted "
              "function"),
    "data_ptr": ("it is the address of the tensor's memory, which the compiled program may place elsewhere",
                 "compare tensors with torch ops, or call it outside the jitted function"),
    "grad_fn": ("thunder records the whole call's autograd graph as one backward of its own, so tensors made inside "
                "have no autograd node of eager's",
                "test .requires_grad instead, or read .grad_fn of the jitted function's outputs"),
}
_ATTRIBUTES = frozenset({"grad_fn"})  # read without a call


def _refuse(name: str):
    why, instead = REFUSED[name]
    what = f"torch.Tensor.{name}" + ("" if name in _ATTRIBUTES else "()")
    raise UnsupportedError(f"{what} inside a jitted function is not supported by thunder{user_location_suffix()}: "
                           f"{why}; {instead}")


def _refused_method(name: str):
    def method(self, *args, **kwargs):
        _refuse(name)

    method.__name__ = name
    return method


for _name in REFUSED:
    tensor_methods[_name] = property(lambda self, _n=_name: _refuse(_n)) if _name in _ATTRIBUTES \
        else _refused_method(_name)
