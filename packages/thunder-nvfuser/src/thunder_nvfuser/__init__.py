"""thunder-nvfuser: a fusion executor for thunder on nvFuser's direct Python bindings (``nvfuser_direct``).

Installed (with the nvFuser wheel matching your torch, e.g. ``nvfuser-cu130-torch210``), it registers the
``nvfuser`` executor through thunder's plugin hooks; ``thunder.jit`` then fuses elementwise ops, broadcasts,
casts, reshapes, permutes, reductions and normalizations into nvFuser fusions, and writes in-place updates
(``copy_to_out_``) straight into their destination. See docs/nvfuser.md.

``fusion_definition(jfn)`` shows the nvFuser programs a jitted function runs.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["executor", "fusion_definition", "regions"]


def executor():
    """The ``nvfuser`` executor object (also ``thunder.extend.get_executor("nvfuser")``)."""
    from thunder_nvfuser.plugin import ex

    return ex


def regions(jfn) -> list:
    """The nvFuser regions (``NvFuserRegion``) of the last computation and backward traces of ``jfn`` (a jitted
    function, or a trace), in the order they run."""
    import thunder
    from thunder.core.trace import TraceCtx

    if isinstance(jfn, TraceCtx):
        traces = [jfn]
    else:
        traces = [ts[-1] for ts in (thunder.last_traces(jfn), thunder.last_backward_traces(jfn)) if ts]
    return [region for trace in traces for bsym in trace.bound_symbols if bsym.sym.id.startswith("nvfuser.")
            for region in (bsym.sym.call_ctx or {}).values()]


def fusion_definition(jfn) -> dict[str, str]:
    """Region name -> its nvFuser program as Python text: nvFuser's own printout of each definition built so far
    (one per input descriptor), or, for a region that has not run, the definition it builds for contiguous inputs.
    ``jfn`` is a jitted function, or a trace."""
    shown = {}
    for region in regions(jfn):
        if region.definitions:
            shown[region.name] = "\n".join(str(fd) for fd in region.definitions.values())
        else:
            shown[region.name] = region.contiguous_program()
    return shown
