"""``torch.compile(fn, backend="thunder")``: Dynamo captures FX graphs, thunder.jit compiles each.

The backend is registered with PyTorch through the ``torch_dynamo_backends`` entry point of
thunder-core, so ``backend="thunder"`` works without importing thunder first.
"""

from __future__ import annotations

__all__ = ["thunder_backend", "ThunderCompiler"]


class ThunderCompiler:
    """A Dynamo backend: ``torch.compile(fn, backend=ThunderCompiler(executors=[...]))`` passes jit options."""

    def __init__(self, **jit_options):
        self.jit_options = jit_options

    def __call__(self, gm, example_inputs, **kwargs):
        import thunder

        # Dynamo's graph modules generate their forward lazily, on first call, by setting attributes on
        # themselves; generate it now so that tracing reads the module instead of mutating it.
        real_recompile = getattr(gm, "real_recompile", None)
        if real_recompile is not None:
            real_recompile()
        # Each graph Dynamo hands over is an nn.Module (GraphModule); thunder.jit interprets its forward.
        return thunder.jit(gm, **self.jit_options)


def thunder_backend(gm, example_inputs, **kwargs):
    return ThunderCompiler()(gm, example_inputs, **kwargs)
