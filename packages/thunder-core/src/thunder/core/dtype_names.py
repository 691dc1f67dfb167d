"""PyTorch's names of dtypes in its error messages: the ScalarType name most kernels print ("Float", "Long") and
the C++ type name a few print (mm's dtype check: "float", "long int"). Thunder's own names (``dtypes.float32``)
never appear in a message eager would raise."""

from __future__ import annotations

__all__ = ["scalar_name", "cpp_name"]

# thunder dtype name -> (ScalarType name, C++ type name)
_NAMES = {
    "bool8": ("Bool", "bool"), "uint8": ("Byte", "unsigned char"), "int8": ("Char", "signed char"),
    "int16": ("Short", "short int"), "int32": ("Int", "int"), "int64": ("Long", "long int"),
    "float16": ("Half", "c10::Half"), "bfloat16": ("BFloat16", "c10::BFloat16"), "float32": ("Float", "float"),
    "float64": ("Double", "double"), "complex32": ("ComplexHalf", "c10::complex<c10::Half>"),
    "complex64": ("ComplexFloat", "c10::complex<float>"), "complex128": ("ComplexDouble", "c10::complex<double>"),
}


def scalar_name(d) -> str:
    """``Float``, ``Long``: the name in "expected scalar type Float but found Long" and most kernels' messages."""
    return _NAMES[d.name][0]


def cpp_name(d) -> str:
    """``float``, ``long int``: the name in messages that print the C++ type."""
    return _NAMES[d.name][1]
