"""The C++ type names PyTorch prints in a few error messages (mm's dtype check: "float != long int"); most print
the ScalarType name (``dtypes.torch_scalar_name``: "Float", "Long"). Thunder's own names (``dtypes.float32``) never
appear in a message eager would raise."""

from __future__ import annotations

__all__ = ["cpp_name"]

_CPP_NAMES = {
    "bool8": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
    "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "complex32": "c10::complex<c10::Half>", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def cpp_name(d) -> str:
    """``float``, ``long int``: the name in messages that print the C++ type."""
    return _CPP_NAMES[d.name]
