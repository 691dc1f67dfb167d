"""thunder-triton: a fusion executor for thunder that generates Triton kernels.

Installed, it registers the ``triton`` executor through thunder's plugin hooks; ``thunder.jit`` then fuses
elementwise ops, broadcasts, dtype conversions, single-axis reductions, softmax and normalizations into
generated Triton kernels (on CUDA, or on CPU tensors under ``TRITON_INTERPRET=1``). See docs/triton.md.

``kernel_sources(jfn)`` shows the kernels a jitted function runs.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["kernel_sources", "executor"]


def executor():
    """The ``triton`` executor object (also ``thunder.extend.get_executor("triton")``)."""
    from thunder_triton.plugin import ex

    return ex


def kernel_sources(jfn) -> dict[str, str]:
    """Kernel name -> generated Triton source, for the kernels in the last computation (and backward)
    traces of ``jfn``, in the order they run."""
    import thunder

    found: dict[str, str] = {}
    traces = []
    for getter in (thunder.last_traces, thunder.last_backward_traces):
        ts = getter(jfn)
        if ts:
            traces.append(ts[-1])
    for trace in traces:
        for bsym in trace.bound_symbols:
            for launcher in (bsym.sym.call_ctx or {}).values():
                source = getattr(launcher, "source", None)
                if bsym.sym.id.startswith("triton.") and source is not None:
                    found.setdefault(launcher.name, source)
    return found
