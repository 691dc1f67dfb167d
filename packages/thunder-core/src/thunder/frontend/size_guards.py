"""Guards of a size read from tensor data: a continuation traced with the size symbolic serves every size that
passes the checks the rest of the program made on it (a broadcast's ``i0 != 1``, a slice's ``i0 > 0``)."""

from __future__ import annotations

from thunder.core import prims
from thunder.core.proxies import NumberProxy, Proxy
from thunder.core.symbol import Symbol
from thunder.frontend.value_reads import CONVERSIONS, segment_end

__all__ = ["size_read_guards", "sizes_check", "exact_where_constrained_later", "read_guard", "check_read",
           "ReadGuardFailed", "exact_expression"]


def _as_number(a, dtype):
    return {bool: bool, int: int, float: float, complex: complex}[dtype](a) if dtype in (bool, int, float, complex) \
        else None


_NUMBER_FUNCTIONS = {**prims.number_functions, "convert_element_type": _as_number}
# the names a guard's generated expression calls its functions by; ``_read_<kind>`` converts a value read inside a
# segment as the split would (value_reads.CONVERSIONS)
_GUARD_NAMESPACE = {**{f"_{name}": fn for name, fn in _NUMBER_FUNCTIONS.items()},
                    **{f"_read_{kind.strip('_')}": fn for kind, fn in CONVERSIONS.items()}}


class ReadGuardFailed(Exception):
    """A value read inside a segment (no split there) failed the checks the segment was traced under: the call runs
    again on the segments split at that read (frontend/segments.py)."""


def _read_guard_meta(value, expression):
    return None


# The checks of a value read inside a segment, where the program is not split at the read: ``expression`` (of
# ``value``: a size's guard, or the read's conversion equal to the value traced) must hold, or the segment raises
# ReadGuardFailed. Kept by dead-code elimination (a side effect).
read_guard = Symbol("read_guard", _read_guard_meta, id="read_guard", is_prim=True,
                    module="thunder.frontend.size_guards", tags=("side_effect",))

_COMPILED: dict[str, object] = {}


def check_read(value, expression: str) -> None:
    """What ``read_guard`` runs: raises ReadGuardFailed where ``value`` fails ``expression``."""
    guard = _COMPILED.get(expression)
    if guard is None:
        guard = _COMPILED[expression] = eval(f"lambda size: {expression}", dict(_GUARD_NAMESPACE))  # noqa: S307
    if not guard(value):
        raise ReadGuardFailed(f"the value read from tensor data fails {expression}")


def exact_expression(read) -> str | None:
    """The check of a read kept for its exact value (``guard`` None), as ``read_guard`` evaluates it: its conversion
    equal to the value traced; None where that is no scalar comparison (a list, a float, the text of a tensor)."""
    if read.kind not in _EXACT_KINDS or type(read.value) not in (bool, int):
        return None
    return f"_read_{read.kind.strip('_')}(size) == {read.value!r}"


_EXACT_KINDS = frozenset({"__bool__", "__int__", "__index__", "number", "size"})


def size_read_guards(computation, reads) -> None:
    """Gives each size read whose constraints (the branches, indices and shape checks the rest of the program
    took on it) are computed from that size alone a ``guard`` checking them; those constraints leave
    ``computation.constraints``, whose prologue cannot compute them. Any other constraint on a read size keeps the
    continuation for its exact value."""
    from thunder.frontend.prologue import _tautology

    sizes = _sizes_read(computation, reads)
    if not sizes:
        return
    origin, defs = _origins(computation, sizes)
    checks = {name: [] for name in sizes}
    exact, kept, seen = set(), [], set()
    for proxy, value in computation.constraints:
        sources = origin.get(proxy.name)
        if not sources:
            kept.append((proxy, value))
            continue
        b = defs.get(proxy.name)
        if b is not None and _tautology(b, value):
            continue
        if len(sources) > 1 or not _computable(proxy, defs, sizes):
            exact.update(sources)
            continue
        key = (proxy.name, value)
        if key not in seen:
            seen.add(key)
            checks[next(iter(sources))].append((proxy, value))
    computation.constraints = kept
    for name, read in sizes.items():
        read.guard = None if name in exact else _guard(name, checks[name], defs)


def exact_where_constrained_later(computation, reads, start: int) -> None:
    """Constraints lowering added (``computation.constraints[start:]``: functionalization asking the layout of a
    view sized by a read) on numbers computed from a size read leave the prologue, which cannot compute them; the
    continuation after that read is then kept for the read's exact value."""
    sizes = _sizes_read(computation, reads)
    late = computation.constraints[start:]
    if not sizes or not late:
        return
    origin, _ = _origins(computation, sizes)
    kept = computation.constraints[:start]
    for proxy, value in late:
        sources = origin.get(proxy.name)
        if not sources:
            kept.append((proxy, value))
        for name in sources or ():
            sizes[name].guard = None
    computation.constraints = kept


def _sizes_read(computation, reads) -> dict:
    markers = [b for b in computation.bound_symbols if b.sym is segment_end]
    return {m.args[0].name: read for m, read in zip(markers, reads) if read.kind == "size"}


def _origins(computation, sizes) -> tuple[dict, dict]:
    """(number name -> the size reads it is computed from, number name -> the bound symbol computing it)."""
    origin = {name: {name} for name in sizes}
    defs = {}

    def visit(bsyms):
        for b in bsyms:
            visit(b.subsymbols)
            sources = set().union(*(origin.get(a.name, ()) for a in b.flat_proxy_args if isinstance(a, NumberProxy)))
            for o in b.flat_proxy_outs:
                if isinstance(o, NumberProxy) and sources:
                    origin.setdefault(o.name, set()).update(sources)
                    defs.setdefault(o.name, b)

    visit(computation.bound_symbols)
    return origin, defs


def _computable(proxy, defs, sizes) -> bool:
    if proxy.name in sizes:
        return True
    b = defs.get(proxy.name)
    if b is None or b.sym.name not in _NUMBER_FUNCTIONS or not b.sym.is_prim:
        return False
    return all(not isinstance(a, Proxy) or (isinstance(a, NumberProxy) and _computable(a, defs, sizes))
               for a in b.args) and not b.kwargs


def sizes_check(reads):
    """``check(values) -> bool`` for a continuation traced later: the sizes read before it (``values``, in order)
    must pass what *its* segments assumed about them, which the splits before it did not check (None: nothing to
    check)."""
    # a size whose guard asks nothing (the rest of the program never compared it) needs no check
    sizes = [(i, r) for i, r in enumerate(reads) if r.kind == "size" and (r.guard is None or r.guard.checks)]
    if not sizes:
        return None

    def check(values) -> bool:
        return all(values[i] == r.value if r.guard is None else r.guard(values[i]) for i, r in sizes)

    return check


def _guard(name, checks, defs):
    """``guard(size) -> bool``: the constraints ``checks`` computed from the size ``name``, as one generated
    expression (broadcasts ask the same question many times: each distinct one is asked once)."""
    namespace: dict = {}
    constants: list[str] = []  # the names of the constant objects the expression reads

    def expr(p) -> str:
        if isinstance(p, (bool, int, float)):
            return repr(p)
        if not isinstance(p, NumberProxy):
            constant = f"_c{len(namespace)}"
            namespace[constant] = p
            constants.append(constant)
            return constant
        if p.name == name:
            return "size"
        b = defs[p.name]
        fn = f"_{b.sym.name}"
        namespace[fn] = _NUMBER_FUNCTIONS[b.sym.name]
        return f"{fn}({', '.join(expr(a) for a in b.args)})"

    questions = dict.fromkeys(f"({expr(p)}) == {value!r}" for p, value in checks)
    guard = eval(f"lambda size: {' and '.join(questions) or 'True'}", namespace)  # noqa: S307 (generated)
    guard.checks = tuple(questions)
    # the text ``read_guard`` can check inside a segment: only where it names no constant object
    guard.expression = None if constants else " and ".join(questions)
    return guard
