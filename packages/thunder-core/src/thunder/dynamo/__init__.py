"""``torch.compile(fn, backend="thunder")``: Dynamo captures FX graphs, thunder.jit compiles each.

The backend is registered with PyTorch through the ``torch_dynamo_backends`` entry point of
thunder-core, so ``backend="thunder"`` works without importing thunder first. ``thunderfx(fn)`` is the
same with the backend object kept, for its traces and split reasons; ``thunder_profile`` and
``thunder_optimize`` choose per graph between thunder and eager from measurements.
"""

from __future__ import annotations

from thunder.dynamo.compiler import ThunderCompiler, ThunderFXCompiledObject, thunder_backend, thunderfx
from thunder.dynamo.profile import thunder_optimize, thunder_profile
from thunder.dynamo.splitter import SplitReason, SplitReasonType, SubgraphInfo

__all__ = ["thunder_backend", "ThunderCompiler", "ThunderFXCompiledObject", "thunderfx", "thunder_profile",
           "thunder_optimize", "SplitReason", "SplitReasonType", "SubgraphInfo"]
