"""Eager's error for a tensor saved for backward and updated in place afterwards.

Eager's autograd saves some arguments (or the result) of an op for its backward, with the version of the tensor's
memory at that moment; an in-place update of that memory afterwards (of the tensor or of any view sharing it) makes
the backward fail when it reaches the op: "one of the variables needed for gradient computation has been modified
by an inplace operation". Thunder's functional trace computes the right gradient from the value as it was, so it
would silently succeed where eager fails.

``modified_saved_values(trace)`` walks the program as the user wrote it (before functionalization), finds each op
that read a tensor needing grad and one of whose tensors is updated in place later, and asks PyTorch itself
whether eager saved that tensor and what it says: the op and the later updates are replayed on small zero tensors
of the same shapes, with the version counters the program gives them. Only such programs pay for the replay.
The autograd transform then makes the backward raise that message when it reaches the op (``prims.raise_in_backward``
on the op's output cotangent): a backward that does not reach it runs, as in eager.
"""

from __future__ import annotations

import math

import torch

from thunder.core import dtypes
from thunder.core.proxies import NumberProxy, TensorProxy, pyval
from thunder.core.pytree import tree_flatten, tree_map
from thunder.core.symbol import BoundSymbol
from thunder.core.trace import TraceCtx
from thunder.transforms.autograd import _differentiable_dtype

__all__ = ["modified_saved_values"]

_MODIFIED = "modified by an inplace operation"
_REPLAY_ELEMENTS = 1 << 16  # larger tensors are not replayed (the op runs on real zero tensors)
set_version = torch._C._autograd._unsafe_set_version_counter


def modified_saved_values(trace: TraceCtx) -> dict[str, tuple]:
    """Output name of an op -> (the RuntimeError message eager's backward raises when it reaches that op, counting
    versions from 0 at the call; the input whose entry version they count from, or None)."""
    from thunder.transforms.layouts import MAYBE_VIEWS, Layouts

    # First every reshape is taken for a view. A reshape eager does by copying (a non-contiguous input) has memory,
    # and a version counter, of its own; splitting a counter only removes updates from it, so only where a saved
    # tensor's counter was updated is the jit's layouts asked (reading strides: checks in the prologue)
    walk = _VersionWalk(trace, copies=lambda b: False)
    updated = {g for _, versions in walk.reads for g, v in versions.values() if walk.count[g] > v}
    if not updated:
        return {}
    if any(b.sym.id in MAYBE_VIEWS for b in trace.bound_symbols):
        layouts = (trace.layouts or Layouts()).replay_from(trace)
        decided_by = walk.group

        def copies(b: BoundSymbol) -> bool:
            return b.sym.id in MAYBE_VIEWS and decided_by.get(b.args[0].name) in updated and not layouts.aliases(b)

        walk = _VersionWalk(trace, copies)
    messages: dict[str, tuple] = {}
    for b, versions in walk.reads:
        modified = [g for g, v in versions.values() if walk.count[g] > v]
        if modified:
            message = _eager_message(b, versions, walk.count, walk.last_update, walk.restrides, walk.needs_grad)
            if message is not None:
                _specialize_shapes(trace, b)  # the message names the sizes: an entry for other sizes says others
                entry = (message, walk.root.get(modified[0]))
                messages.update((o.name, entry) for o in b.flat_proxy_outs if isinstance(o, TensorProxy))
    return messages


class _VersionWalk:
    """The program's version counters as eager keeps them: which tensors share one (views), the in-place updates of
    each, and the version of each tensor when an op that records gradients read it. ``copies(b)``: the view
    symbol ``b`` copied instead (its result gets a counter of its own)."""

    def __init__(self, trace: TraceCtx, copies):
        from thunder.grad.registry import is_nondifferentiable
        from thunder.transforms.autograd import _reached_outputs
        from thunder.transforms.functionalize import is_view

        self.group: dict[str, int] = {}  # tensor name -> its memory's version counter (shared by views)
        self.count: dict[int, int] = {}  # version counter -> in-place updates so far
        self.needs_grad = {a.name for a in trace.args if isinstance(a, TensorProxy) and a.requires_grad}
        self.reads = []  # (op, {tensor name: version when the op ran})
        self.last_update: dict[int, BoundSymbol] = {}  # version counter -> the last in-place update of it
        self.restrides: set[int] = set()  # ids of the view symbols that stand for x.t_(), x.squeeze_()...
        self.inputs = {a.name for a in trace.args if isinstance(a, TensorProxy)}
        self.root: dict[int, str] = {}  # version counter -> the input whose memory it is
        group, count, needs_grad, last_update = self.group, self.count, self.needs_grad, self.last_update
        group_of = self.group_of
        grad_enabled = trace.grad_enabled
        for b in trace.bound_symbols:
            if b.sym.id == "prims.set_grad_enabled":
                grad_enabled = bool(pyval(b.args[0]))
                continue
            tensors = [p for p in b.flat_proxy_args if isinstance(p, TensorProxy)]
            outs = [o for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
            tracked = grad_enabled and any(p.name in needs_grad for p in tensors) and not is_nondifferentiable(b.sym.id)
            if "inplace" in b.sym.tags and tensors:
                g = group_of(tensors[0])
                count[g] += 1
                last_update[g] = b
                for o in outs:
                    group[o.name] = g
                if tracked:
                    reached = _reached_outputs(b, {p.name for p in tensors if p.name in needs_grad})
                    if reached:
                        needs_grad.update(o.name for o in (*outs, tensors[0]) if _differentiable_dtype(o))
                continue
            if tracked:  # the outputs computed from what needs grad (not zeros_like's, which reads only the shape)
                needs_grad.update(_reached_outputs(b, {p.name for p in tensors if p.name in needs_grad}))
            if is_view(b) and tensors and not copies(b):
                for o in outs:
                    group[o.name] = group_of(tensors[0])
                if any(o.name in trace.restrided_views for o in outs):  # x.t_(): an in-place change of x's metadata
                    count[group_of(tensors[0])] += 1
                    last_update[group_of(tensors[0])] = b
                    self.restrides.add(id(b))
                continue
            if tracked:
                self.reads.append((b, {p.name: (group_of(p), count[group_of(p)]) for p in (*tensors, *outs)}))

    def group_of(self, p: TensorProxy) -> int:
        if p.name not in self.group:
            self.group[p.name] = len(self.count)
            self.count[self.group[p.name]] = 0
            if p.name in self.inputs:
                self.root[self.group[p.name]] = p.name
        return self.group[p.name]


def _specialize_shapes(trace: TraceCtx, b: BoundSymbol) -> None:
    for p in (*b.flat_proxy_args, *b.flat_proxy_outs):
        if isinstance(p, TensorProxy):
            for d in p.shape:
                if isinstance(d, NumberProxy) and not d.static:
                    trace.add_constraint(d, d.value)


def _shape(p: TensorProxy) -> tuple:
    return tuple(int(pyval(d)) for d in p.shape)


def _eager_message(b: BoundSymbol, versions: dict, count: dict, last_update: dict, restrides: set,
                   needs_grad: set) -> str | None:
    """The message eager's backward raises at ``b`` (None: it does not raise, or the replay cannot tell)."""
    from thunder.transforms.layouts import _table_call

    fn = _table_call(b.sym.id)
    if fn is None:
        return None
    standins: dict[str, torch.Tensor] = {}
    leaves_of: dict[str, torch.Tensor] = {}

    def replayed_update(name):
        """The last in-place update of ``name``'s memory, where it updated ``name`` itself and ``name`` needs grad:
        replayed on the stand-in, it gives the stand-in eager's grad_fn, which eager's message names."""
        g, v = versions[name]
        u = last_update.get(g)
        if count[g] > v and u is not None and u.flat_proxy_args[0].name == name and name in needs_grad:
            return u
        return None

    def standin(x):
        if isinstance(x, TensorProxy):
            if x.name not in standins:
                shape = _shape(x)
                t = torch.zeros(shape, dtype=dtypes.to_torch_dtype(x.dtype), device=x.device.to_torch())
                if x.name in needs_grad and _differentiable_dtype(x):
                    leaves_of[x.name] = t.requires_grad_()
                    if x.name in versions and replayed_update(x.name) is not None:
                        t = t.clone()  # not a leaf: eager lets it be updated in place
                standins[x.name] = t
            return standins[x.name]
        if isinstance(x, NumberProxy):
            return pyval(x)
        if isinstance(x, dtypes.dtype):
            return dtypes.to_torch_dtype(x)
        return x

    def bump(name, t):
        g, v = versions[name]
        if count[g] <= v:
            return
        u = last_update.get(g)
        if u is not None and id(u) in restrides and u.flat_proxy_args[0].name == name:
            # eager's message shows the saved tensor's sizes now: replay the re-stride (x.t_()) on the stand-in
            set_version((t,), (count[g] - 1,))
            getattr(t, f"{u.sym.name}_")(*tree_map(standin, u.args[1:]), **tree_map(standin, u.kwargs))
            return
        u = replayed_update(name) if t.grad_fn is not None else None
        update = _table_call(u.sym.id) if u is not None else None
        if update is None:
            set_version((t,), (count[g],))
            return
        set_version((t,), (count[g] - 1,))
        others = {}

        def arg(x):
            if isinstance(x, TensorProxy) and x.name == name:
                return t
            if isinstance(x, TensorProxy):
                return others.setdefault(x.name, torch.zeros(_shape(x),
                                                             dtype=dtypes.to_torch_dtype(x.dtype),
                                                             device=x.device.to_torch()))
            return standin(x)

        u_args, u_kwargs = tree_map(arg, (u.args, u.kwargs))
        update(*u_args, **u_kwargs)

    leaves = tree_flatten((b.args, b.kwargs))[0]
    if sum(math.prod(_shape(x)) for x in leaves if isinstance(x, TensorProxy)) > _REPLAY_ELEMENTS:
        return None
    try:
        args, kwargs = tree_map(standin, (b.args, b.kwargs))
        for name, (g, v) in versions.items():
            if name in standins:
                set_version((standins[name],), (v,))
        result = fn(*args, **kwargs)
        outs = [t for t in tree_flatten(result)[0] if isinstance(t, torch.Tensor)]
        names = [o.name for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
        for name, t in zip(names, outs):
            bump(name, t)
        for name, t in list(standins.items()):
            if name in versions:
                bump(name, t)
        differentiable = [t for t in outs if t.requires_grad]
        inputs = list(leaves_of.values())
        if not differentiable or not inputs:
            return None
        torch.autograd.grad(differentiable, inputs, [torch.ones_like(t) for t in differentiable], allow_unused=True)
    except RuntimeError as e:
        return str(e) if _MODIFIED in str(e) else None
    except Exception:
        return None
    return None
