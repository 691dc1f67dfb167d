"""Compile plugins: the names ``thunder.compile(..., plugins=...)`` accepts, and ``register_plugin``.

Plugins whose runtime this project does not provide (TransformerEngine FP8, bitsandbytes 4-bit quantization,
CUDA graphs) are refused when the recipe is applied, with the reason: a plugin that silently did nothing would
let a user believe the model was quantized or captured. "ddp" and "fsdp" prepare the model with
``thunder.distributed.ddp`` / ``thunder.distributed.fsdp`` before it is jitted.
"""

from __future__ import annotations

import importlib
import importlib.util

from thunder.core.errors import UnsupportedError
from thunder.recipes.recipe import Plugin, PluginPolicy

__all__ = ["DDP", "FSDP", "FP8", "QuantizeInt4", "ReduceOverhead", "get_plugin", "get_plugin_names",
           "register_plugin", "names_to_plugins"]


class _Distributed(Plugin):
    """Prepares the model with ``thunder.distributed.<wrapper>(model, **options)``; the options given here are
    passed on unchanged."""

    wrapper = ""

    def __init__(self, **options):
        self.options = options

    def setup_model(self, model):
        try:
            distributed = importlib.import_module("thunder.distributed")
        except ImportError as e:
            raise UnsupportedError(f"the {self.wrapper!r} plugin prepares the model with "
                                   f"thunder.distributed.{self.wrapper}, and this installation has no "
                                   f"thunder.distributed ({e})") from e
        wrap = getattr(distributed, self.wrapper, None)
        if wrap is None:
            raise UnsupportedError(f"the {self.wrapper!r} plugin needs thunder.distributed.{self.wrapper}, which this "
                                   "installation's thunder.distributed does not provide")
        return wrap(model, **self.options)


class DDP(_Distributed):
    """Distributed data parallel training: ``thunder.distributed.ddp(model, **options)`` before jitting."""

    wrapper = "ddp"


class FSDP(_Distributed):
    """Fully sharded data parallel training: ``thunder.distributed.fsdp(model, **options)`` before jitting."""

    wrapper = "fsdp"


def _refuse(plugin: str, what: str, module: str | None, package: str | None) -> None:
    if module is not None and importlib.util.find_spec(module) is None:
        raise UnsupportedError(f"the {plugin!r} plugin needs {what}, and {package} is not installed here")
    raise UnsupportedError(f"the {plugin!r} plugin needs {what}, which this project does not provide yet "
                           "(see docs/coming-from-lightning-thunder.md)")


class FP8(Plugin):
    """FP8 matmuls through NVIDIA TransformerEngine: refused (no TransformerEngine executor here)."""

    def setup_executors(self):
        _refuse("fp8", "an executor running linear layers through NVIDIA TransformerEngine", "transformer_engine",
                "transformer_engine")


class QuantizeInt4(Plugin):
    """4-bit weight quantization through bitsandbytes: refused (no bitsandbytes executor here)."""

    def setup_transforms(self):
        _refuse("quantize-int4", "bitsandbytes' 4-bit linear kernels", "bitsandbytes", "bitsandbytes")


class ReduceOverhead(Plugin):
    """CUDA graphs around the compiled program: refused (no CUDA graph transform here)."""

    policy = PluginPolicy.POST

    def setup_transforms(self):
        import torch

        if not torch.cuda.is_available():
            raise UnsupportedError("the 'reduce-overhead' plugin captures CUDA graphs, and no CUDA device is available "
                                   "here")
        _refuse("reduce-overhead", "a transform capturing the program in CUDA graphs", None, None)


names_to_plugins: dict[str, type] = {
    "ddp": DDP,
    "fsdp": FSDP,
    "quantize-int4": QuantizeInt4,
    "fp8": FP8,
    "reduce-overhead": ReduceOverhead,
}


def get_plugin(name: str) -> type | None:
    return names_to_plugins.get(name)


def get_plugin_names() -> list[str]:
    return list(names_to_plugins)


def register_plugin(name: str, cls: type) -> None:
    """Makes ``thunder.compile(..., plugins=name)`` instantiate ``cls`` (a :class:`thunder.Plugin` subclass)."""
    names_to_plugins[name] = cls
