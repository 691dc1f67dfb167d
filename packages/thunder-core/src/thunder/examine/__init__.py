"""Tools that explain what thunder did: what a call saved for backward, why calls recompiled (``cache_report``),
which executor took each operation and why another did not (``claims``), whether a program is supported
(``examine``), its fusions (``get_fusions``, ``get_fusion_symbols``) and a picture of a trace
(``render_trace``, ``make_trace_dot``). The last three are loaded on first use, so that ``import thunder`` stays
fast."""

from thunder.examine.cache_report import CacheReport, cache_report
from thunder.examine.claims import Claim, claims
from thunder.examine.saved import SavedForBackward, saved_for_backward

__all__ = ["saved_for_backward", "SavedForBackward", "cache_report", "CacheReport", "claims", "Claim", "examine",
           "ExamineReport", "get_fusions", "get_fusion_symbols", "make_trace_dot", "trace_dot_source",
           "render_trace"]

_LAZY = {
    "examine": "thunder.examine.support",
    "ExamineReport": "thunder.examine.support",
    "get_fusions": "thunder.examine.fusions",
    "get_fusion_symbols": "thunder.examine.fusions",
    "make_trace_dot": "thunder.examine.graph",
    "trace_dot_source": "thunder.examine.graph",
    "render_trace": "thunder.examine.graph",
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'thunder.examine' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
