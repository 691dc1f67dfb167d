"""Thunder's dtypes: executor-neutral element types, with conversions to and from torch's.

Numbers in traces use the Python types ``bool``, ``int``, ``float`` and ``complex`` as their dtypes,
as PyTorch does for scalars in type promotion.
"""

from __future__ import annotations

__all__ = [
    "dtype", "bool8", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float16", "float32",
    "float64", "complex32", "complex64", "complex128", "all_dtypes", "to_torch_dtype", "from_torch_dtype",
    "is_float_dtype", "is_complex_dtype", "is_integer_dtype", "is_boolean_dtype", "is_low_precision",
    "corresponding_real_dtype", "corresponding_complex_dtype", "to_dtype", "torch_scalar_name",
    "cpp_name",
]


class dtype:
    """An element type. ``kind`` is one of 'bool', 'int', 'float', 'complex'; ``short`` prints in traces."""

    __slots__ = ("name", "short", "kind", "bytes", "signed")

    def __init__(self, name: str, short: str, kind: str, nbytes: int, signed: bool = True):
        self.name, self.short, self.kind, self.bytes, self.signed = name, short, kind, nbytes, signed

    def __repr__(self) -> str:
        return f"dtypes.{self.name}"

    # what torch.dtype answers (user code asks x.dtype.is_floating_point)
    @property
    def is_floating_point(self) -> bool:
        return self.kind == "float"

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    @property
    def is_signed(self) -> bool:
        return self.signed

    @property
    def itemsize(self) -> int:
        return self.bytes

    # A proxy's dtype is a thunder dtype, and user code compares it with torch's (``x.dtype == torch.float16``,
    # ``mask.dtype != torch.bool``, ``{torch.float32: ...}[x.dtype]``): it must take eager's branch, so a dtype
    # equals its torch counterpart and hashes like it. Among thunder dtypes equality is identity.
    def __eq__(self, other):
        if isinstance(other, dtype):
            return self is other
        if _is_torch_dtype(other):
            return to_torch_dtype(self) is other
        return NotImplemented

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        try:
            return hash(to_torch_dtype(self))
        except ImportError:  # without torch there is nothing to equal
            return id(self) >> 4

    def __reduce__(self):
        return (to_dtype, (self.name,))


bool8 = dtype("bool8", "b8", "bool", 1, signed=False)
uint8 = dtype("uint8", "u8", "int", 1, signed=False)
int8 = dtype("int8", "i8", "int", 1)
int16 = dtype("int16", "i16", "int", 2)
int32 = dtype("int32", "i32", "int", 4)
int64 = dtype("int64", "i64", "int", 8)
bfloat16 = dtype("bfloat16", "bf16", "float", 2)
float16 = dtype("float16", "f16", "float", 2)
float32 = dtype("float32", "f32", "float", 4)
float64 = dtype("float64", "f64", "float", 8)
complex32 = dtype("complex32", "c32", "complex", 4)
complex64 = dtype("complex64", "c64", "complex", 8)
complex128 = dtype("complex128", "c128", "complex", 16)

all_dtypes = (bool8, uint8, int8, int16, int32, int64, bfloat16, float16, float32, float64, complex32, complex64,
              complex128)
_by_name = {d.name: d for d in all_dtypes}
_by_name["bool"] = bool8


def is_boolean_dtype(d) -> bool:
    return d is bool or (isinstance(d, dtype) and d.kind == "bool")


def is_integer_dtype(d) -> bool:
    """Integer in the PyTorch sense: bool is not an integer dtype."""
    return d is int or (isinstance(d, dtype) and d.kind == "int")


def is_float_dtype(d) -> bool:
    return d is float or (isinstance(d, dtype) and d.kind == "float")


def is_complex_dtype(d) -> bool:
    return d is complex or (isinstance(d, dtype) and d.kind == "complex")


def is_low_precision(d) -> bool:
    return d is bfloat16 or d is float16


def corresponding_real_dtype(d):
    return {complex32: float16, complex64: float32, complex128: float64, complex: float}.get(d, d)


def corresponding_complex_dtype(d):
    return {float32: complex64, float64: complex128, float16: complex32, bfloat16: complex64, float: complex}.get(d, d)


_to_torch: dict | None = None
_from_torch: dict | None = None


def _tables() -> tuple[dict, dict]:
    # torch is imported lazily so that importing dtypes stays cheap and torch-free. Two tables, since a dtype
    # and its torch counterpart are equal keys.
    global _to_torch, _from_torch
    if _to_torch is None:
        import torch

        pairs = ((bool8, torch.bool), (uint8, torch.uint8), (int8, torch.int8), (int16, torch.int16),
                 (int32, torch.int32), (int64, torch.int64), (bfloat16, torch.bfloat16), (float16, torch.float16),
                 (float32, torch.float32), (float64, torch.float64), (complex32, torch.complex32),
                 (complex64, torch.complex64), (complex128, torch.complex128))
        # keyed by identity: a dtype hashes like its torch counterpart, which needs this very table
        _from_torch = {id(t): d for d, t in pairs}
        _to_torch = {id(d): t for d, t in pairs}
        for number_type, torch_dtype in ((bool, torch.bool), (int, torch.int64), (float, torch.float32),
                                         (complex, torch.complex64)):
            _to_torch[id(number_type)] = torch_dtype
    return _to_torch, _from_torch


def _is_torch_dtype(x) -> bool:
    return type(x).__name__ == "dtype" and type(x).__module__ == "torch"


def to_torch_dtype(d):
    """Thunder dtype (or Python number type, or torch dtype, or None) -> torch dtype (or None)."""
    if d is None:
        return None
    return _tables()[0][id(d)] if isinstance(d, dtype) or d in (bool, int, float, complex) else d


def from_torch_dtype(td) -> dtype:
    try:
        return _tables()[1][id(td)]
    except KeyError:
        raise KeyError(td) from None


# PyTorch's two spellings of a dtype in its error messages: the ScalarType name most print ("Float", "Long"),
# and the C++ type a few print (mm's dtype check: "float != long int"). Thunder's own names never appear there.
_TORCH_NAMES = {
    "bool8": ("Bool", "bool"), "uint8": ("Byte", "unsigned char"), "int8": ("Char", "signed char"),
    "int16": ("Short", "short int"), "int32": ("Int", "int"), "int64": ("Long", "long int"),
    "float16": ("Half", "c10::Half"), "bfloat16": ("BFloat16", "c10::BFloat16"), "float32": ("Float", "float"),
    "float64": ("Double", "double"), "complex32": (None, "c10::complex<c10::Half>"),
    "complex64": ("ComplexFloat", "c10::complex<float>"), "complex128": ("ComplexDouble", "c10::complex<double>"),
}


def torch_scalar_name(d) -> str:
    """PyTorch's ScalarType name of a dtype in its error messages ("Float", "Long")."""
    return _TORCH_NAMES[d.name][0] or d.name


def cpp_name(d) -> str:
    """``float``, ``long int``: the name in the few messages that print the C++ type."""
    return _TORCH_NAMES[d.name][1]


def to_dtype(x) -> dtype | type | None:
    """Accepts a thunder dtype, a torch dtype, a name, or a Python number type."""
    if x is None or isinstance(x, dtype) or x in (bool, int, float, complex):
        return x
    if isinstance(x, str):
        return _by_name[x]
    return from_torch_dtype(x)
