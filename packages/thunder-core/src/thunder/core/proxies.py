"""Proxies: the values traces are written in.

A ``TensorProxy`` stands for a tensor (shape, dtype, device, requires_grad); ``NumberProxy`` subclasses
stand for Python numbers. A shape is a tuple whose entries are ``int`` or ``IntegerProxy``: code must
go through :mod:`thunder.core.shapes` instead of assuming ints.

Tensor methods and operators are looked up in ``tensor_methods``, a table the torch language fills, so
this module knows nothing about what ``x.sin()`` means. ``__torch_function__`` sends ``torch.sin(x)``
called natively on a proxy to the same language (via ``torch_function_table``).
"""

from __future__ import annotations

import numbers
import sys

from thunder.core import dtypes
from thunder.core.devices import Device, to_device

__all__ = [
    "Proxy", "TensorProxy", "NumberProxy", "IntegerProxy", "FloatProxy", "BoolProxy", "ComplexProxy",
    "tensor_methods", "torch_function_table", "proxy_number", "pyval", "type_string",
]

# name -> callable(self, *args, **kwargs); filled by thunder.torch
tensor_methods: dict[str, object] = {}
# torch callable -> thunder callable; filled by thunder.torch
torch_function_table: dict[object, object] = {}


def _fresh_name(prefix: str) -> str:
    from thunder.core.trace import get_tracectx

    trace = get_tracectx()
    if trace is None:
        raise RuntimeError("proxies can only be created while tracing")
    return trace.make_name(prefix)


class Proxy:
    __slots__ = ("name",)
    name_prefix = "p"

    def __init__(self, name: str | None = None):
        if name is None:
            name = _fresh_name(self.name_prefix)
        else:
            from thunder.core.trace import get_tracectx

            trace = get_tracectx()
            if trace is not None:
                trace.names.add(name)  # callers pick names with make_unique_name or reuse a proxy's name on purpose
        self.name = name

    def type_string(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}: {self.type_string()}>"


# reads of a tensor's value (the program is split there, frontend/value_reads.py) -> how messages name them
VALUE_READ_DESCRIPTIONS = {"__bool__": "bool()", "__int__": "int()", "__float__": "float()", "__index__": "an index",
                           "tolist": ".tolist()", "text": "the text (str, repr, an f-string)"}


def _value_needed(name):
    def method(self, *args, **kwargs):
        from thunder.core.trace import get_tracectx

        reader = getattr(get_tracectx(), "value_reader", None)
        if reader is None:
            from thunder.core.errors import read_in_sub_program

            raise read_in_sub_program(f"{VALUE_READ_DESCRIPTIONS[name]} of a tensor needs its value")
        return reader.read_tensor(self, name)

    method.__name__ = name
    return method


def _method(name):
    if name in VALUE_READ_DESCRIPTIONS:
        return _value_needed(name)

    def method(self, *args, **kwargs):
        fn = tensor_methods.get(name)
        if fn is None and not name.startswith("__i"):
            from thunder.torch.opaque import opaque_method  # the fallback: one opaque torch call

            fn = opaque_method(self, name)
            if fn is not None:
                return fn(*args, **kwargs)
        if fn is None:
            from thunder.core.errors import UnsupportedError, user_location_suffix

            raise UnsupportedError(
                f"torch.Tensor.{name.strip('_')} ({name}) is not supported by thunder yet"
                f"{user_location_suffix()}; rewrite the code without it or file an issue"
            )
        return fn(self, *args, **kwargs)

    method.__name__ = name
    return method


_TENSOR_DUNDERS = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
    "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__",
    "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__", "__rshift__",
    "__neg__", "__pos__", "__abs__", "__invert__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__div__", "__rdiv__", "__rlshift__", "__rrshift__",
    "__getitem__", "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__",
    "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__",
    "__len__", "__iter__", "__reversed__", "__bool__", "__float__", "__int__", "__index__",
)


class TensorProxy(Proxy):
    # outside: for a proxy of a tensor from outside the function, a callable(name) reading attributes of the
    # real tensor that are state rather than metadata (``grad``), as checked inputs; None for computed tensors
    __slots__ = ("shape", "dtype", "device", "requires_grad", "outside")
    name_prefix = "t"

    def __init__(self, name=None, *, shape, dtype, device, requires_grad: bool = False):
        super().__init__(name)
        self.shape = tuple(shape)
        self.dtype = dtypes.to_dtype(dtype)
        self.device = to_device(device)
        self.requires_grad = bool(requires_grad)
        self.outside = None

    # layouts thunder traces never have
    is_sparse = is_quantized = is_nested = is_mkldnn = False

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    @property
    def data(self):
        return tensor_methods["data"](self)

    @data.setter
    def data(self, value):
        from thunder.torch.inplace import set_data

        set_data(self, value)

    @property
    def is_leaf(self) -> bool:
        # an outside tensor's own (a checked input); a computed tensor is a leaf unless autograd records it
        return self.outside("is_leaf") if self.outside is not None else not self.requires_grad

    @property
    def grad(self):
        # a computed tensor has no .grad here (eager: None for non-leaf tensors)
        return self.outside("grad") if self.outside is not None else None

    def replace(self, name=None, **changes) -> "TensorProxy":
        """A new proxy like this one, with the given metadata changed."""
        kw = dict(shape=self.shape, dtype=self.dtype, device=self.device, requires_grad=self.requires_grad)
        kw.update(changes)
        return TensorProxy(name, **kw)

    def take_place_of(self, other: "TensorProxy") -> None:
        """This object stands for ``other`` from now on: its name and metadata become other's (``outside`` stays:
        it is still the same tensor of the caller's). Only :meth:`TraceCtx.rebind` calls this."""
        self.name, self.shape, self.dtype, self.device = other.name, other.shape, other.dtype, other.device
        self.requires_grad = other.requires_grad

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def size(self, dim: int | None = None):
        if dim is None:
            return self.shape
        from thunder.core.shapes import canonicalize_dim

        return self.shape[canonicalize_dim(self.ndim, dim)]

    def numel(self):
        from thunder.core.shapes import numel

        return numel(self.shape)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def type_string(self) -> str:
        return type_string(self)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        fn = tensor_methods.get(name)
        if fn is None:
            from thunder.torch.opaque import opaque_method  # the fallback: one opaque torch call

            fallback = opaque_method(self, name)
            if fallback is not None:
                return fallback
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")  # torch.Tensor has none either
        return fn.__get__(self, TensorProxy)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        fn = torch_function_table.get(func)
        if fn is None and getattr(func, "__module__", None) != "torch.overrides":
            from thunder.torch.opaque import call_opaque  # the fallback: one opaque torch call

            return call_opaque(func, args, kwargs)
        if fn is None:
            from thunder.core.errors import UnsupportedError, user_location_suffix

            name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
            raise UnsupportedError(
                f"torch operation {getattr(func, '__module__', 'torch')}.{name} is not supported by thunder yet"
                f"{user_location_suffix()}; rewrite the code without it or file an issue"
            )
        return fn(*args, **(kwargs or {}))


for _name in _TENSOR_DUNDERS + ("tolist",):
    setattr(TensorProxy, _name, _method(_name))


def _tensor_contains(self, element) -> bool:
    # eager's Tensor.__contains__: one bool of (element == self).any() (a value read), never Python's default of
    # iterating the rows and asking each one's truth (transformers 4.x: `pad_token_id in input_ids[:, [-1, 0]]`)
    if not isinstance(element, (TensorProxy, NumberProxy, numbers.Number)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")
    return bool((element == self).any())


TensorProxy.__contains__ = _tensor_contains
TensorProxy.__hash__ = object.__hash__  # __eq__ is elementwise, identity keeps proxies usable as dict keys

# The text of a tensor is its values. Asked by the user's code (an f-string, str(t), "%s" % t, an exception message
# it formats: the interpreter runs those natively, so it is the caller), the program is split and the text read;
# thunder's own code describing a proxy (its messages, a debugger) gets the proxy's name and metadata.
_read_text = _value_needed("text")


def _asked_by_user_code(frame) -> bool:
    return frame.f_globals.get("__name__", "").startswith("thunder.interpreter.")


def _tensor_repr(self) -> str:
    return _text(self) if _asked_by_user_code(sys._getframe(1)) else Proxy.__repr__(self)


def _text(self) -> str:
    if self.requires_grad:
        from thunder.core.errors import UnsupportedError, user_location_suffix

        raise UnsupportedError(
            f"the text of {self.name}, a tensor that requires grad{user_location_suffix()}, names the autograd node "
            "that made it (grad_fn=<MulBackward0>), which thunder's traced operations do not reproduce; format "
            "t.detach() or t.item() instead, or print(t) (which prints on every call)")
    return _read_text(self)


def _tensor_format(self, spec: str) -> str:
    if not _asked_by_user_code(sys._getframe(1)):
        return format(Proxy.__repr__(self), spec)
    if self.ndim == 0:
        return format(self.item(), spec)  # as eager: a 0-d tensor formats as its number (f"{loss:.3f}")
    if spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return _text(self)


TensorProxy.__repr__ = TensorProxy.__str__ = _tensor_repr
TensorProxy.__format__ = _tensor_format


def type_string(p) -> str:
    if isinstance(p, TensorProxy):
        dims = ", ".join(str(d) if isinstance(d, int) else d.name for d in p.shape)
        return f"{p.device} {p.dtype.short}[{dims}]"
    if isinstance(p, NumberProxy):
        return f"{p.python_type.__name__} {p.value!r}"
    return type(p).__name__


class NumberProxy(Proxy):
    """A Python number in a trace. ``static`` numbers are baked into the program and checked by the
    prologue; dynamic ones are real inputs of the computation."""

    # data_dependent: computed from tensor data at run time (``t.item()``); its trace-time value is only a
    # sample, so nothing may depend on it at trace time
    __slots__ = ("value", "static", "data_dependent")
    number_type: type = object  # set by each subclass

    def __init__(self, name=None, *, value, static: bool = False, data_dependent: bool = False):
        super().__init__(name)
        self.value, self.static, self.data_dependent = value, static, data_dependent

    @property
    def python_type(self) -> type:
        return self.number_type

    def type_string(self) -> str:
        return type_string(self)

    def _concrete(self, what: str):
        """The value, for code that needs a Python value now (control flow, an index, a native call).
        A dynamic number becomes a constraint of the trace: the prologue checks that it has this value
        again, and a call where it does not gets its own trace."""
        if self.data_dependent:
            from thunder.core.trace import get_tracectx

            reader = getattr(get_tracectx(), "value_reader", None)
            if reader is not None:  # the program is split here: the value is read when the part before has run
                return reader.read_number(self, what)
            from thunder.core.errors import read_in_sub_program

            raise read_in_sub_program(
                f"{what} of {self.name}, a number computed from tensor data (.item()), needs its value")
        if not self.static:
            from thunder.core.trace import get_tracectx

            trace = get_tracectx()
            if trace is None:
                from thunder.core.errors import UnsupportedError

                raise UnsupportedError(f"{what} of the dynamic number {self.name} outside of tracing")
            trace.add_constraint(self, self.value)
        return self.value

    def __bool__(self):
        if self.number_type is not bool and not self.static and not self.data_dependent:
            from thunder.core.trace import get_tracectx

            if get_tracectx() is not None:
                # only truthiness is asked (``if not t.numel():``): the trace relies on ``n != 0``, not on n's value
                return bool(self != 0)
        return bool(self._concrete("bool()"))

    def __index__(self):
        return int(self._concrete("an index"))

    def __int__(self):
        return int(self._concrete("int()"))

    def __float__(self):
        return float(self._concrete("float()"))

    def __complex__(self):
        return complex(self._concrete("complex()"))

    def __format__(self, spec):
        return format(self._concrete("formatting"), spec)

    def __str__(self):
        return str(self._concrete("str()"))

    def __repr__(self):
        # native code formatting a container the program built (``str((k, v))``, ``f"{[n]}"``) sees the number
        # as eager would; outside tracing (a debugger, a log) the proxy shows itself
        from thunder.core.trace import get_tracectx

        return repr(self._concrete("repr()")) if get_tracectx() is not None else super().__repr__()

    def __getattr__(self, name: str):
        # the number's own methods and attributes (n.bit_length(), f.is_integer(), n.real): on its value, which
        # becomes a constraint; names the number type lacks stay missing without one (hasattr(n, "shape"))
        if name.startswith("__") or not hasattr(self.number_type, name):
            raise AttributeError(f"'{self.number_type.__name__}' object has no attribute '{name}'")
        return getattr(self._concrete(f".{name}"), name)


def _number_op(name):
    def op(self, *args):
        if not all(isinstance(a, (NumberProxy, bool, int, float, complex)) for a in args):
            return NotImplemented  # tensors, sequences (``[x] * n``): the other operand decides
        from thunder.core import prims

        return prims._number_dunder(name.strip("_"), self, *args)

    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__divmod__",
              "__rdivmod__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__",
              "__rlshift__", "__rshift__", "__rrshift__", "__neg__", "__pos__", "__abs__", "__invert__", "__floor__",
              "__ceil__", "__trunc__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(NumberProxy, _name, _number_op(_name))


def _round(self, ndigits=None):
    from thunder.core import prims

    return prims.round(self) if ndigits is None else prims.round_to_digits(self, ndigits)


NumberProxy.__round__ = _round
NumberProxy.__hash__ = object.__hash__


class IntegerProxy(NumberProxy):
    name_prefix, number_type = "i", int


class FloatProxy(NumberProxy):
    name_prefix, number_type = "f", float


class BoolProxy(NumberProxy):
    name_prefix, number_type = "b", bool


class ComplexProxy(NumberProxy):
    name_prefix, number_type = "c", complex


_number_proxy_types = {bool: BoolProxy, int: IntegerProxy, float: FloatProxy, complex: ComplexProxy}

# Python's own errors name an operand's type by ``__name__`` ("type Tensor doesn't define __round__ method",
# "unsupported operand type(s) for divmod(): 'Tensor' and 'int'"): a proxy is named after what it stands for, so
# the user's program sees eager's messages. The class keeps its qualified name (repr(TensorProxy) says it).
TensorProxy.__name__ = "Tensor"
for _type, _proxy_type in _number_proxy_types.items():
    _proxy_type.__name__ = _type.__name__


def proxy_number(value, name=None, static=False) -> NumberProxy:
    return _number_proxy_types[type(value)](name, value=value, static=static)


def pyval(x):
    """The Python value of a number or NumberProxy."""
    return x.value if isinstance(x, NumberProxy) else x


def is_device(x) -> bool:
    return isinstance(x, Device)
