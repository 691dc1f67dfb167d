"""One precompiled header for a CPU region's C++ file: the C++ wrapper's header and its kernels' header together.

With the C++ wrapper, Inductor compiles a region into one C++ file: the code calling the kernels, which includes
``cpp_wrapper/cpu.h``, and the kernels, which include ``cpp_prefix.h`` (the vectorized types). Inductor precompiles
the first header only, so g++ parses the second (and instantiates its templates) in every region's file again: about
as long as compiling the GPT's kernels themselves (docs/inductor.md). Precompiling both as one header
(``cpp_wrapper_prefix.h``, built once per machine and flags under Inductor's ``precompiled_headers`` directory, as
Inductor's own) makes every later file start from both. The generated code, the flags and the kernels are Inductor's.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["combined_header"]

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpp_wrapper_prefix.h")


@contextlib.contextmanager
def combined_header():
    """Within: C++-wrapper files for CPU precompile ``cpp_wrapper_prefix.h`` instead of Inductor's own header (the
    regions' compiles run under ``compile._lock``, one at a time)."""
    from torch._inductor.codecache import CppWrapperCodeCache

    inductor_header = CppWrapperCodeCache.__dict__["_get_uncompiled_header"]

    def header(cls, device: str) -> str | None:
        return HEADER if device.startswith("cpu") else inductor_header.__func__(cls, device)

    CppWrapperCodeCache._get_uncompiled_header = classmethod(header)
    try:
        yield
    finally:
        CppWrapperCodeCache._get_uncompiled_header = inductor_header
