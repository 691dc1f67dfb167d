"""Thunder: a source-to-source compiler for PyTorch programs.

``thunder.jit(fn_or_module)`` interprets the program, records a trace of its tensor and number
operations, transforms it, hands it to executors, and caches the result behind a cheap prologue.
"""

from __future__ import annotations

from thunder import (
    distributed,  # noqa: F401
    examine,  # noqa: F401
    extend,  # noqa: F401
    torch,  # noqa: F401  (the torch language registers its symbols on import)
)
from thunder.core import dtypes, prims  # noqa: F401
from thunder.extend import get_all_executors, get_default_executors  # noqa: F401
from thunder.frontend.api import (  # noqa: F401
    cache_hits,
    cache_misses,
    compile_stats,
    last_backward_traces,
    last_prologue_traces,
    last_traces,
)
from thunder.frontend.cache import CACHE_OPTIONS  # noqa: F401
from thunder.frontend.jit import ThunderFunction, jit  # noqa: F401
from thunder.frontend.module import ThunderModule  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "jit", "CACHE_OPTIONS", "last_traces", "last_prologue_traces", "last_backward_traces", "cache_hits",
    "cache_misses", "compile_stats", "get_default_executors", "get_all_executors", "extend", "ThunderModule",
    "ThunderFunction", "dtypes", "prims", "examine", "distributed",
]
