"""Frees each intermediate right after its last use, by inserting ``del`` statements, so peak
memory is what the program needs rather than everything it ever computed. Inside each sub-trace too."""

from __future__ import annotations

from thunder.core.proxies import Proxy
from thunder.core.pytree import tree_flatten
from thunder.core.symbol import Symbol
from thunder.core.trace import TraceCtx, from_trace, timed_transform

__all__ = ["del_last_used"]


def _del_printer(bsym, imports):
    return ["del " + ", ".join(p.name for p in bsym.args)]


DEL = Symbol("del", id="python.del", is_prim=True, python_printer=_del_printer, tags=("side_effect",))


def del_last_used(trace: TraceCtx) -> TraceCtx:
    with timed_transform("Delete last used") as done:
        keep = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}
        seen: set[str] = set(keep)
        new_bsyms = []
        for bsym in reversed(trace.bound_symbols):
            # Names that appear here for the last time (walking backwards: first time) die after this bsym.
            dying = []
            for p in bsym.flat_proxy_args + bsym.flat_proxy_outs:
                if p.name not in seen:
                    seen.add(p.name)
                    dying.append(p)
            if dying:
                new_bsyms.append(DEL.bind(*dict((p.name, p) for p in dying).values(), output=None))
            new_bsyms.append(bsym.map_subtraces(del_last_used))
        new = from_trace(trace)
        new.bound_symbols = new_bsyms[::-1]
        done(new)
    return new
