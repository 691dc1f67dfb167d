"""``DebugOptions(check_traces=True)``: consistency checks run on the traces a compilation produced.

A broken transform usually shows up as a trace that reads a name before defining it (or after deleting it),
or that no longer prints as Python. These checks find that at compile time, naming the trace's provenance,
instead of as a NameError deep inside the generated program.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy
from thunder.core.pytree import tree_flatten

__all__ = ["check_trace"]

# symbol id -> how many leading arguments are uses; the rest name values it binds (the prologue's check_tensor
# states the symbolic sizes of a tensor, which the unpack of its dims defines after it)
_LEADING_USES = {"prims.check_tensor": 1, "python.check_tensor": 1}


def check_trace(trace, *, runs: bool = True) -> None:
    """Raises AssertionError when ``trace``'s printed source is not valid Python or, for a trace that ``runs``
    (the last of its list), when it uses a proxy before defining it or after deleting it. The traces before it
    are records of a step (a decomposition's sizes live in its subsymbols until dispatch hoists them, a use may
    wait for the next dead-code elimination), so only their printing is checked."""
    what = trace.provenance.description if trace.provenance is not None else trace.fn_name
    source = trace.python()
    try:
        compile(source, f"<trace {trace.fn_name}>", "exec")
    except SyntaxError as e:
        raise AssertionError(f"the trace made by {what!r} does not print as valid Python ({e}):\n{source}") from None
    if not runs:
        return
    params = {p.name if isinstance(p, Proxy) else str(p).lstrip("*") for p in trace.args}
    defined, deleted = _check_scope(trace.bound_symbols, params, what)
    for p in tree_flatten(trace.output)[0]:
        if isinstance(p, Proxy) and (p.name not in defined or p.name in deleted):
            raise AssertionError(f"the trace made by {what!r} returns {p.name}, which is not defined at its end")


def _check_scope(bsyms, defined: set[str], what: str) -> tuple[set[str], set[str]]:
    deleted: set[str] = set()
    for bsym in bsyms:
        uses = _LEADING_USES.get(bsym.sym.id)
        args = bsym.flat_proxy_args if uses is None else [a for a in bsym.args[:uses] if isinstance(a, Proxy)]
        for p in args:
            if p.name in deleted:
                raise AssertionError(f"in the trace made by {what!r}, {p.name} is used after it was deleted:\n{bsym}")
            if p.name not in defined:
                raise AssertionError(f"in the trace made by {what!r}, {p.name} is used before it is defined:\n{bsym}")
        if bsym.sym.id == "python.del":
            deleted.update(p.name for p in bsym.flat_proxy_args)
            continue
        defined.update(p.name for p in bsym.flat_proxy_outs)
    return defined, deleted
