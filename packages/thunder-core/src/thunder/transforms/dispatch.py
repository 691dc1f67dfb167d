"""Executor dispatch: who runs each bound symbol.

For each bound symbol, the executors are asked in priority order; the first whose implementation
accepts the arguments claims it and lowers it to its executor symbols. A symbol nobody claims is
replaced by its subsymbols, which are tried the same way. Fusion executors then group what they
claimed into regions (``FusionExecutor.fusion_pass``). Sub-traces (a cond's branches, a loop's body) are
dispatched first, each as a computation of its own (fusion passes included), and stay arguments of the
higher-order symbol that runs them.
"""

from __future__ import annotations

from thunder.core.errors import UnsupportedError
from thunder.core.proxies import NumberProxy
from thunder.core.symbol import BoundSymbol
from thunder.core.trace import TraceCtx, from_trace, timed_transform, tracectx
from thunder.executors.torch_stores import views_stored_into
from thunder.extend import FusionExecutor, lower_keeping_tags

__all__ = ["dispatch_to_executors"]


def _lower(bsym: BoundSymbol, executors, out: list, *, fusible: bool = True) -> None:
    bsym = bsym.map_subtraces(lambda t: dispatch_to_executors(t, executors))
    for ex in executors:
        if (fusible or not isinstance(ex, FusionExecutor)) and ex.can_execute(bsym):
            # Sizes the decomposition computed may name the outputs' dims or later arguments: keep their
            # definitions (dead-code elimination drops the unused ones).
            for number_def in bsym.number_definitions():
                _lower(number_def, executors, out)
            out.extend(lower_keeping_tags(ex, bsym))
            return
    if not bsym.subsymbols:
        if not bsym.sym.is_prim and not bsym.flat_proxy_outs:
            return  # a decomposition that recorded nothing and makes nothing (unbind of an empty dim): no work
        where = f" (at {bsym.source})" if bsym.source is not None else ""
        names = ", ".join(e.name for e in executors)
        raise UnsupportedError(
            f"no executor can run {bsym.sym.id}{where}: none of [{names}] implements it for these arguments "
            "and it has no decomposition; add an executor that implements it or file an issue"
        )
    for sub in bsym.subsymbols:
        _lower(sub if sub.source is not None else sub.replace(source=bsym.source), executors, out, fusible=fusible)


def dispatch_to_executors(trace: TraceCtx, executors) -> TraceCtx:
    with timed_transform("Transform for execution") as done:
        new = from_trace(trace)
        with tracectx(new):
            # the views an input's update writes through stay with the operator executors, whose lowering stores
            # into them in place (executors/torch_stores.py)
            stored_views = views_stored_into(trace) if any(isinstance(e, FusionExecutor) for e in executors) else ()
            for i, bsym in enumerate(trace.bound_symbols):
                _lower(bsym, executors, new.bound_symbols, fusible=i not in stored_views)
        # a size the trace receives as an argument (a backward gets the forward's sizes) is not computed again
        # from values it does not have
        given = {p.name for p in trace.args if isinstance(p, NumberProxy)}
        if given:
            new.bound_symbols = [b for b in new.bound_symbols if not b.flat_proxy_outs or not all(
                isinstance(o, NumberProxy) and o.name in given for o in b.flat_proxy_outs)]
        for ex in executors:
            if isinstance(ex, FusionExecutor):
                new = ex.fusion_pass(new)
        for ex in executors:
            new = ex.after_dispatch(new)
        done(new)
    return new
