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
from thunder.core import devices, dtypes, prims  # noqa: F401
from thunder.core.dtypes import (  # noqa: F401  (lightning-thunder's top-level dtype names)
    bfloat16,
    bool8,
    complex32,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from thunder.core.prims import AnyProxy  # noqa: F401
from thunder.core.proxies import ComplexProxy, FloatProxy, IntegerProxy, NumberProxy, Proxy, TensorProxy  # noqa: F401
from thunder.core.trace import TraceCtx  # noqa: F401
from thunder.extend import get_all_executors, get_default_executors, get_executor, resolve_executors  # noqa: F401
from thunder.frontend.api import (  # noqa: F401
    cache_hits,
    cache_misses,
    cache_option,
    compile_stats,
    last_backward_traces,
    last_prologue_traces,
    last_traces,
    list_transforms,
)
from thunder.frontend.cache import CACHE_OPTIONS  # noqa: F401
from thunder.frontend.jit import ThunderFunction, jit  # noqa: F401
from thunder.frontend.module import ThunderModule  # noqa: F401
from thunder.frontend.options import DebugOptions  # noqa: F401
from thunder.frontend.simple_trace import trace  # noqa: F401
from thunder.transforms.transform import Transform  # noqa: F401

__version__ = "0.1.0"

# Loaded on first use, so that ``import thunder`` stays fast: name -> (module, attribute).
_LAZY = {
    "compile": ("thunder.recipes.compile", "compile"),
    "Recipe": ("thunder.recipes.recipe", "Recipe"),
    "Plugin": ("thunder.recipes.recipe", "Plugin"),
    "register_plugin": ("thunder.recipes.plugins", "register_plugin"),
    "recipes": ("thunder.recipes", None),
    "dynamo": ("thunder.dynamo", None),
    "transforms": ("thunder.transforms", None),
}
# lightning-thunder's names of executors: None where the executor is not installed (looked up on first use, since
# finding executors loads the plugins)
_EXECUTOR_NAMES = {"pytorch_executor": "torch", "nvfuser_executor": "nvfuser", "cudnn_executor": "cudnn",
                   "sdpa_executor": "sdpa"}


def __getattr__(name: str):
    if name in _EXECUTOR_NAMES:
        return get_executor(_EXECUTOR_NAMES[name])
    if name not in _LAZY:
        raise AttributeError(f"module 'thunder' has no attribute {name!r}")
    import importlib

    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


__all__ = [
    "jit", "CACHE_OPTIONS", "last_traces", "last_prologue_traces", "last_backward_traces", "cache_hits",
    "cache_misses", "compile_stats", "get_default_executors", "get_all_executors", "extend", "ThunderModule",
    "ThunderFunction", "dtypes", "prims", "examine", "distributed", "devices", "DebugOptions", "Transform", "trace",
    "TraceCtx", "TensorProxy", "Proxy", "NumberProxy", "IntegerProxy", "FloatProxy", "ComplexProxy", "AnyProxy", "get_executor",
    "resolve_executors", "cache_option", "list_transforms", "compile", "Recipe", "Plugin", "register_plugin",
    "bool8", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float16", "float32", "float64", "complex32",
    "complex64", "complex128",
]
