"""Reads of overwritten buffers: the values ``copy_to_out_`` destroys are snapshotted before it.

``x1 = prims.copy_to_out_(c, out=x)`` writes into the buffer of input ``x``, and an executor may make
``x`` alias ``c``. After it, ``x`` (and every earlier version ``x0, x1, ...`` of the same buffer) holds
the new value, and ``c`` may change with any later write into ``x``. A program can still need the old
values: ``v.copy_(t); t.mul_(2); use(v)`` (``v`` is renamed to ``t``), a value consumed by two copies
after CSE merged them, a saved-for-backward input the forward updates later. Such a read gets a clone
taken before the copy (a stale version of ``x``), or the copy consumes a clone (``c`` read afterwards),
so every read sees the value eager's program sees and the copy contract holds.
"""

from __future__ import annotations

from collections import defaultdict

from thunder.core.proxies import Proxy
from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.core.symbol import BoundSymbol
from thunder.core.trace import TraceCtx, TraceProvenance, from_trace, tracectx
from thunder.extend import swap_proxies

__all__ = ["snapshot_overwritten", "snapshot_saved_values", "is_copy_to_out", "shared_memory"]


def is_copy_to_out(bsym: BoundSymbol) -> bool:
    return bsym.sym.id == "prims.copy_to_out_"


def _reads(bsym: BoundSymbol) -> list[Proxy]:
    if is_copy_to_out(bsym):  # out= is the buffer written, not a value read
        return [bsym.args[0]] if isinstance(bsym.args[0], Proxy) else []
    return list(bsym.flat_proxy_args)


def _rename_reads(bsym: BoundSymbol, mapping: dict) -> BoundSymbol:
    if not mapping:
        return bsym
    if is_copy_to_out(bsym):
        c = bsym.args[0]
        return bsym.replace(args=(mapping.get(c.name, c), *bsym.args[1:])) if c.name in mapping else bsym
    return swap_proxies(bsym, mapping)


# prims the torch executor runs as views of their input (``broadcast_in_dim`` is ``expand``: a ``copy_`` of a view
# into a fresh tensor becomes one, fuzz seed 265133); taking one for a view only costs a snapshot where it is not
_VIEW_PRIMS = frozenset({"prims.broadcast_in_dim", "prims.slice", "prims.squeeze", "prims.transpose", "prims.reshape"})


def _views(bsyms) -> dict[str, tuple[str, int]]:
    """name -> (the tensor it may be a view of, the position of the op that made it)."""
    from thunder.transforms.functionalize import MAYBE_VIEWS, is_view

    views = {}
    for i, b in enumerate(bsyms):
        if (is_view(b) or b.sym.id in MAYBE_VIEWS or b.sym.id in _VIEW_PRIMS) and b.args \
                and isinstance(b.args[0], Proxy):
            for o in b.flat_proxy_outs:
                views[o.name] = (b.args[0].name, i)
    return views


def _root(views, name: str) -> str:
    while name in views:
        name = views[name][0]
    return name


def memory_root(bsyms):
    """name -> the tensor whose memory it may live in: through views of one tensor, and the versions ``copy_to_out_``
    makes of the buffer it writes."""
    bases = _views(bsyms)
    bases.update((o.name, (b.kwargs["out"].name, i)) for i, b in enumerate(bsyms) if is_copy_to_out(b)
                 for o in b.flat_proxy_outs)
    return lambda name: _root(bases, name)


def shared_memory(bsyms, names) -> dict[str, str]:
    """Each of ``names`` that may share memory with an earlier one -> that one (:func:`memory_root`)."""
    root_of = memory_root(bsyms)
    first, shared = {}, {}
    for name in names:
        root = root_of(name)
        shared.update({name: first[root]} if root in first else {})
        first.setdefault(root, name)
    return shared


def snapshot_overwritten(trace: TraceCtx, value_positions=None) -> TraceCtx:
    """``trace`` with a clone before each ``copy_to_out_`` whose destroyed values are read afterwards.

    ``value_positions``: the flattened output leaves that are values read at the end; the others are
    buffers returned as themselves (an updated input returned holds its final value). Default: every
    leaf except the trace's inputs."""
    import thunder.torch as ltorch

    bsyms = trace.bound_symbols
    copies = [j for j, b in enumerate(bsyms) if is_copy_to_out(b)]
    if not copies:
        return trace
    leaves, spec = tree_flatten(trace.output)
    inputs = {a.name for a in trace.args if isinstance(a, Proxy)}
    if value_positions is None:
        value_positions = {i for i, x in enumerate(leaves) if isinstance(x, Proxy) and x.name not in inputs}
    end = len(bsyms)
    reads: dict[str, list[int]] = defaultdict(list)
    for i, b in enumerate(bsyms):
        for a in _reads(b):
            reads[a.name].append(i)
    for i in value_positions:
        reads[leaves[i].name].append(end)

    # plan: before bound symbol j (a copy), snapshot these names; from j on, reads of a snapshotted name read the
    # snapshot. A view of the buffer is snapshotted where it is made: an executor may write into the buffer
    # before the copy (an in-place store), and does not know that the view, made in an earlier segment of the
    # program, aliases it.
    snapshots: dict[int, list[str]] = defaultdict(list)
    clone_computed: set[int] = set()
    versions: dict[str, list[str]] = {}
    renamed_from: dict[str, int] = {}  # name -> the copy after which its reads read the snapshot
    views = _views(bsyms)
    for j in copies:
        b = bsyms[j]
        c, x = b.args[0], b.kwargs["out"]
        vs = versions.setdefault(x.name, [x.name])
        # a view of the buffer taken before the copy shares its memory: it holds the new value too
        for s in vs + [v for v, (base, i) in views.items() if i < j and _root(views, v) in vs]:
            if s != c.name and any(i > j for i in reads[s]):
                snapshots[views[s][1] + 1 if s in views else j].append(s)
                reads[s] = [i for i in reads[s] if i <= j]  # later reads go to the snapshot
        if c.name not in vs and any(i > j for i in reads[c.name]):
            clone_computed.add(j)
        vs.extend(o.name for o in b.flat_proxy_outs)
    if not snapshots and not clone_computed:
        return trace

    new = from_trace(trace)
    mapping: dict[str, Proxy] = {}
    by_name = {p.name: p for b in bsyms for p in (*b.flat_proxy_args, *b.flat_proxy_outs)}
    by_name.update({a.name: a for a in trace.args if isinstance(a, Proxy)})
    with tracectx(new):
        for j, b in enumerate(bsyms):
            for s in snapshots.get(j, ()):
                mapping[s] = ltorch.clone(mapping.get(s, by_name[s]))
                renamed_from[s] = j
            b = _rename_reads(b, {k: v for k, v in mapping.items() if renamed_from[k] < j or not is_copy_to_out(b)})
            if j in clone_computed:
                b = b.replace(args=(ltorch.clone(b.args[0]), *b.args[1:]))
            new.bound_symbols.append(b)
    new.provenance = TraceProvenance("Snapshots of the values in-place updates of inputs overwrite", 0.0)
    new.output = tree_unflatten([mapping.get(x.name, x) if i in value_positions and isinstance(x, Proxy) else x
                                 for i, x in enumerate(leaves)], spec)
    return new


def snapshot_saved_values(forward: TraceCtx, changed_after=frozenset()) -> TraceCtx:
    """The forward of an autograd split, where what is saved for backward is read at the end: an input the
    forward updates later is saved as it was when read (``outputs, saved tensors, saved numbers``). So is an input
    in ``changed_after``, whose metadata the epilogue changes in place after the call (``x.t_()``): saved as itself,
    it would have the old shape and the version the change bumps, which autograd refuses."""
    outputs, saved, numbers = forward.output
    inputs = {a.name for a in forward.args if isinstance(a, Proxy)}
    flat_outputs, flat_saved = tree_flatten(outputs)[0], tree_flatten(saved)[0]
    values = {i for i, x in enumerate(flat_outputs) if isinstance(x, Proxy) and x.name not in inputs}
    values |= set(range(len(flat_outputs), len(flat_outputs) + len(flat_saved)))
    forward = snapshot_overwritten(forward, values)
    return _snapshot_saved_inputs(forward, inputs & set(changed_after))


def _snapshot_saved_inputs(forward: TraceCtx, names: set) -> TraceCtx:
    """``forward`` saving a clone of each input in ``names`` it saves, or of a view of one (which shares its
    version counter)."""
    import thunder.torch as ltorch
    from thunder.transforms.functionalize import is_view

    names = set(names)
    for b in forward.bound_symbols if names else ():
        if is_view(b) and isinstance(b.args[0], Proxy) and b.args[0].name in names:
            names.update(o.name for o in b.flat_proxy_outs)
    outputs, saved, numbers = forward.output
    flat_saved, spec = tree_flatten(saved)
    if not any(isinstance(x, Proxy) and x.name in names for x in flat_saved):
        return forward
    new = from_trace(forward)
    new.bound_symbols.extend(forward.bound_symbols)
    clones: dict[str, Proxy] = {}
    with tracectx(new):
        for x in flat_saved:
            if isinstance(x, Proxy) and x.name in names and x.name not in clones:
                clones[x.name] = ltorch.clone(x)
    new.provenance = TraceProvenance("Snapshots of saved inputs the call changes in place afterwards", 0.0)
    new.output = (outputs, tree_unflatten([clones.get(x.name, x) if isinstance(x, Proxy) else x for x in flat_saved],
                                          spec), numbers)
    return new
