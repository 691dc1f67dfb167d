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
    """The nvFuser regions (``NvFuserRegion``) of the last computation and backward traces of ``jfn``, in the order
    they run."""
    import thunder

    found = []
    for getter in (thunder.last_traces, thunder.last_backward_traces):
        traces = getter(jfn)
        if not traces:
            continue
        for bsym in traces[-1].bound_symbols:
            if bsym.sym.id.startswith("nvfuser."):
                found.extend((bsym.sym.call_ctx or {}).values())
    return found


def fusion_definition(jfn) -> dict[str, str]:
    """Region name -> its nvFuser program as Python text: nvFuser's own printout of each definition built so far
    (one per input descriptor), or, for a region that has not run, the definition it builds for contiguous inputs."""
    shown = {}
    for region in regions(jfn):
        if region.definitions:
            shown[region.name] = "\n".join(str(fd) for fd in region.definitions.values())
        else:
            shown[region.name] = region.contiguous_program()
    return shown
