"""The fusion regions of a trace: which bound symbols a fusion executor runs as one compiled unit."""

from __future__ import annotations

__all__ = ["is_fusion", "get_fusion_symbols", "get_fusions"]


def is_fusion(bsym) -> bool:
    from thunder.extend import FusionExecutor

    return isinstance(bsym.sym.executor, FusionExecutor)


def _warn_if_no_fusion_executor(warn: bool) -> None:
    if not warn:
        return
    from thunder.extend import FusionExecutor, get_all_executors

    if not any(isinstance(e, FusionExecutor) and e.is_available() for e in get_all_executors()):
        import warnings

        warnings.warn("no fusion executor is available here (install thunder-triton, thunder-nvfuser or "
                      "thunder-inductor), so traces have no fusions", stacklevel=3)


def get_fusion_symbols(trace, warn_if_fusions_unavailable: bool = True) -> list:
    """The fusion bound symbols of ``trace`` (each holds the prims it fuses as subsymbols)."""
    _warn_if_no_fusion_executor(warn_if_fusions_unavailable)
    return [b for b in trace.bound_symbols if is_fusion(b)]


def get_fusions(trace, warn_if_fusions_unavailable: bool = True) -> list[tuple[str, object]]:
    """(name, callable) of each fusion in ``trace``: the callable the trace's program calls for it."""
    symbols = get_fusion_symbols(trace, warn_if_fusions_unavailable)
    if not symbols:
        return []
    namespace = trace.python_callable().__globals__
    return [(b.sym.name, namespace[b.sym.name]) for b in symbols]
