"""Buffers a segmented program owns: tensors it made that a later segment may update in place.

``out = torch.zeros_like(x)`` then ``out.index_add_(0, rows, y)`` once per expert, with a split in between, is
``t1 = index_add(t0, ...)``, ``t2 = index_add(t1, ...)``, ... in the functional program: each segment would copy the
whole accumulator to add a few rows. When the accumulator is a tensor the program made (no caller holds it, no view
of it exists) and the scatter is its last reader, the segment running the scatter may write into it instead
(``trace.owned_inputs``; the torch executor's ``scatter_into_fresh_in_place``). Markers of splits before the
scatter keep it too (for a continuation traced at that split, which starts from this call's unchanged value); a
marker after it would keep the old value for a later continuation, so it must not read it.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.frontend.value_reads import segment_end

__all__ = ["updatable_in_place"]

# torch-language ops whose result is a new tensor no other value holds
_ALLOCATING = frozenset({"ltorch.zeros", "ltorch.zeros_like", "ltorch.ones", "ltorch.ones_like", "ltorch.full",
                         "ltorch.full_like", "ltorch.empty", "ltorch.empty_like", "ltorch.clone",
                         "ltorch.index_add", "ltorch.index_copy", "ltorch.scatter_add"})
# torch-language scatters an executor may run in place on their first argument (their backward never reads it)
_SCATTERS = frozenset({"ltorch.index_add", "ltorch.index_copy", "ltorch.scatter_add"})


def updatable_in_place(trace) -> set[str]:
    """Names of the tensors of the functional program ``trace`` (with its split markers) that their last reader,
    a scatter, may update in place: made by an allocating op, read before the scatter only by split markers, not
    read after it, not returned."""
    readers: dict[str, list[int]] = {}
    made = {}
    for i, b in enumerate(trace.bound_symbols):
        for a in b.flat_proxy_args:
            readers.setdefault(a.name, []).append(i)
        if b.sym.id in _ALLOCATING:
            made.update((o.name, o) for o in b.flat_proxy_outs if isinstance(o, TensorProxy))
    returned = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}
    bsyms = trace.bound_symbols
    found = set()
    for name in made:
        where = readers.get(name, ())
        if not where or name in returned:
            continue
        last = bsyms[where[-1]]
        if last.sym.id not in _SCATTERS or not isinstance(last.args[0], Proxy) or last.args[0].name != name \
                or where.count(where[-1]) != 1:
            continue
        if all(bsyms[i].sym is segment_end for i in where[:-1]):
            found.add(name)
    return found
