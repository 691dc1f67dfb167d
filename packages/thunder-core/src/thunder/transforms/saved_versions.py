"""Eager's error for a tensor saved for backward and updated in place afterwards.

Eager's autograd saves some arguments (or the result) of an op for its backward, with the version of the tensor's
memory at that moment; an in-place update of that memory afterwards (of the tensor or of any view sharing it) makes
the backward fail when it reaches the op: "one of the variables needed for gradient computation has been modified
by an inplace operation". Thunder's functional trace computes the right gradient from the value as it was, so it
would silently succeed where eager fails.

``modified_saved_values(trace)`` walks the program as the user wrote it (before functionalization), finds each op
that read a tensor needing grad and one of whose tensors is updated in place later, and asks PyTorch itself
whether eager saved that tensor and what it says. The op is replayed on small tensors of the same shapes
together with the history of the memory its tensors live in, in program order: the views made of it (eager's
layouts: ``matmul`` of an expanded view saves a copy, of a transposed one a view) and the in-place updates of it,
each in its grad mode and with the arguments needing grad that it had, so the saved tensor's ``grad_fn`` is
eager's (``Amin``, ``AsStrided`` for an updated view of a value that did not need grad, ``CopySlices`` for the base
of an updated view, the producer's for an update under ``no_grad``), and its version is the program's. Only such
programs pay for the replay. The autograd transform then makes the backward raise that message when it reaches the
op (``prims.raise_in_backward`` on the op's output cotangent): a backward that does not reach it runs, as in eager.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from thunder.core import dtypes
from thunder.core.devices import Device
from thunder.core.proxies import NumberProxy, TensorProxy, pyval
from thunder.core.pytree import tree_map
from thunder.core.symbol import BoundSymbol
from thunder.core.trace import TraceCtx
from thunder.transforms.autograd import _differentiable_dtype
from thunder.transforms.layouts import _eager_call, torch_results

__all__ = ["modified_saved_values"]

_MODIFIED = "modified by an inplace operation"
_UPDATED_THROUGH_DATA = (
    "thunder: the backward reached an op whose saved tensor the program updated afterwards through .data; eager's "
    "autograd does not see such updates and computes this gradient from the updated values, which thunder's "
    "functional gradient does not do. Update a clone, or make the update before the op reads the tensor")
_REPLAY_ELEMENTS = 1 << 16  # larger tensors are not replayed (the op runs on real tensors)
set_version = torch._C._autograd._unsafe_set_version_counter


@dataclass(frozen=True)
class _Event:
    """A view made of, or an in-place update of, memory that an op's tensors live in."""

    bsym: BoundSymbol
    group: int  # the memory's version counter
    kind: str  # "view", "update", or "restride" (a view symbol standing for x.t_(), x.squeeze_()...)
    grad_enabled: bool
    needs_grad: frozenset  # names among its tensors that needed grad before it ran
    version: int  # the memory's version after it


@dataclass(frozen=True)
class _Read:
    """An op that read a tensor needing grad: eager may have saved some of its tensors."""

    bsym: BoundSymbol
    events_before: int  # how many events (of any memory) came before it
    versions: dict  # name of each of its tensors -> (version counter, version when it ran)
    needs_grad: frozenset


def modified_saved_values(trace: TraceCtx) -> dict[str, tuple]:
    """Output name of an op -> (the RuntimeError message eager's backward raises when it reaches that op, counting
    versions from 0 at the call; the input whose entry version they count from, or None)."""
    from thunder.transforms.functionalize import updated_by
    from thunder.transforms.layouts import MAYBE_VIEWS, Layouts

    # First every reshape is taken for a view. A reshape eager does by copying (a non-contiguous input) has memory,
    # and a version counter, of its own; splitting a counter only removes updates from it, so only where a saved
    # tensor's counter was updated is the jit's layouts asked (it reads strides: checks in the prologue)
    walk = _VersionWalk(trace, copies=lambda b: False)
    updated = {g for read in walk.reads for g, v in read.versions.values() if walk.count[g] > v}
    if not updated:
        return {}
    if any(b.sym.id in MAYBE_VIEWS for b in trace.bound_symbols):
        layouts = (trace.layouts or Layouts()).replay_from(trace)
        first = walk.group

        def copies(b: BoundSymbol) -> bool:
            return b.sym.id in MAYBE_VIEWS and first.get(b.args[0].name) in updated and not layouts.aliases(b)

        walk = _VersionWalk(trace, copies)
    count, events = walk.count, walk.events
    messages: dict[str, tuple] = {}
    for read in walk.reads:
        modified = [g for g, v in read.versions.values() if count[g] > v]
        if not modified:
            continue
        memories = {g for g, _ in read.versions.values()}
        history = [(i < read.events_before, e) for i, e in enumerate(events) if e.group in memories]
        replay = _Replay(walk.inputs, walk.same, walk.producers, walk.group)
        message = replay.message(read, [e for earlier, e in history if earlier],
                                 [e for earlier, e in history if not earlier])
        later_updates = [e for earlier, e in history if not earlier and e.kind == "update"]
        if message is not None and later_updates and all(updated_by(e.bsym).name in walk.through_data
                                                         for e in later_updates):
            message = _UPDATED_THROUGH_DATA
        if message is not None:
            for b in (read.bsym, *(e.bsym for _, e in history)):  # the message names the sizes: an entry for
                _specialize_shapes(trace, b)  # other sizes says others
            entry = (message, walk.root.get(modified[0]))
            messages.update((o.name, entry) for o in read.bsym.flat_proxy_outs if isinstance(o, TensorProxy))
    return messages


class _VersionWalk:
    """The program's memories as eager keeps them: which tensors share a version counter (views), the views made of
    and the in-place updates of each, and the ops that read a tensor needing grad, with the versions they read.
    ``copies(b)``: the view symbol ``b`` copied instead (its result has a counter of its own)."""

    def __init__(self, trace: TraceCtx, copies):
        from thunder.grad.registry import is_nondifferentiable
        from thunder.transforms.autograd import _reached_outputs
        from thunder.transforms.functionalize import OWN_VERSION_COUNTER, is_view, updated_by

        self.group: dict[str, int] = {}  # tensor name -> its memory's version counter (shared by views)
        self.count: dict[int, int] = {}  # version counter -> in-place updates so far
        self.events: list[_Event] = []
        self.reads: list[_Read] = []
        self.same: dict[str, str] = {}  # name -> the tensor it stands for (an in-place op's result, x.t_()'s view)
        self.producers: dict[str, BoundSymbol] = {}  # name -> the op that made it, where that op made new memory
        self.through_data: set[str] = set()  # x.data and its views: updates eager's autograd does not see
        self.inputs = {a.name for a in trace.args if isinstance(a, TensorProxy)}
        self.root: dict[int, str] = {}  # version counter -> the input whose memory it is
        group, count, events, same = self.group, self.count, self.events, self.same
        group_of = self.group_of
        needs_grad = {a.name for a in trace.args if isinstance(a, TensorProxy) and a.requires_grad}
        grad_enabled = trace.grad_enabled
        for b in trace.bound_symbols:
            if b.sym.id == "prims.set_grad_enabled":
                grad_enabled = bool(pyval(b.args[0]))
                continue
            tensors = [p for p in b.flat_proxy_args if isinstance(p, TensorProxy)]
            outs = [o for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
            tracked = grad_enabled and any(p.name in needs_grad for p in tensors) and not is_nondifferentiable(b.sym.id)
            before = frozenset(p.name for p in tensors if p.name in needs_grad)
            if "inplace" in b.sym.tags and tensors:
                target = updated_by(b)
                g = group_of(target)
                count[g] += 1
                for o in outs:
                    group[o.name] = g
                    if o.name != target.name:
                        same[o.name] = target.name
                events.append(_Event(b, g, "update", grad_enabled, before, count[g]))
                if tracked:
                    reached = _reached_outputs(b, before)
                    if reached:
                        needs_grad.update(o.name for o in (*outs, target) if _differentiable_dtype(o))
                continue
            if tracked:  # the outputs computed from what needs grad (not zeros_like's, which reads only the shape)
                needs_grad.update(_reached_outputs(b, before))
            if is_view(b) and tensors and not copies(b):
                if b.sym.id in OWN_VERSION_COUNTER or tensors[0].name in self.through_data:
                    self.through_data.update(o.name for o in outs)
                g = group_of(tensors[0])
                for o in outs:
                    group[o.name] = g
                kind = "view"
                if any(o.name in trace.restrided_views for o in outs):  # x.t_(): an in-place change of x's metadata
                    count[g] += 1
                    same.update((o.name, tensors[0].name) for o in outs)
                    kind = "restride"
                events.append(_Event(b, g, kind, grad_enabled, before, count[g]))
                continue
            self.producers.update((o.name, b) for o in outs)
            if tracked:
                self.reads.append(_Read(b, len(events), {p.name: (group_of(p), count[group_of(p)])
                                                         for p in (*tensors, *outs)}, before))

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


def _standin(p: TensorProxy, generator: torch.Generator) -> torch.Tensor:
    """Values in (0, 1) for floating tensors (a matrix to invert or factor is not singular, a probability is one),
    zeros for the others (valid indices)."""
    dtype = dtypes.to_torch_dtype(p.dtype)
    if dtype.is_floating_point or dtype.is_complex:
        return torch.rand(_shape(p), generator=generator, dtype=dtype).to(p.device.to_torch())
    return torch.zeros(_shape(p), dtype=dtype, device=p.device.to_torch())


def _argument(x):
    """A non-tensor argument of a symbol as the torch call takes it."""
    if isinstance(x, NumberProxy):
        return pyval(x)
    if isinstance(x, dtypes.dtype):
        return dtypes.to_torch_dtype(x)
    if isinstance(x, Device):
        return x.to_torch()
    return x


def _elements(bsyms) -> int:
    return sum(math.prod(_shape(p)) for b in bsyms for p in (*b.flat_proxy_args, *b.flat_proxy_outs)
               if isinstance(p, TensorProxy))


class _Replay:
    """Small tensors standing for the program's tensors, made and updated as the program made and updated
    them: eager's views, versions and grad_fns, which eager's message names."""

    def __init__(self, inputs: set, same: dict, producers: dict, group: dict):
        self.inputs, self.same, self.producers, self.group = inputs, same, producers, group
        self.standins: dict[str, torch.Tensor] = {}
        self.leaves: list[torch.Tensor] = []  # what the replayed backward differentiates for
        self.generator = torch.Generator().manual_seed(0)  # the program's random numbers stay untouched

    def _name(self, name: str) -> str:
        while name in self.same:
            name = self.same[name]
        return name

    def tensor(self, p: TensorProxy, needs_grad: frozenset) -> torch.Tensor:
        name = self._name(p.name)
        if name not in self.standins:
            with torch.enable_grad():  # made where it needed grad (first used maybe under no_grad)
                self.standins[name] = self._new(p, p.name in needs_grad and _differentiable_dtype(p))
        return self.standins[name]

    def _new(self, p: TensorProxy, requires_grad: bool) -> torch.Tensor:
        t = _standin(p, self.generator)
        if not requires_grad:
            return t
        if p.name not in self.inputs:  # eager names the op that made it
            made = self._produced(p)
            if made is not None:
                return made
        self.leaves.append(t.requires_grad_())
        return t if p.name in self.inputs else t.clone()

    def _produced(self, p: TensorProxy) -> torch.Tensor | None:
        """``p`` as its producer makes it from new tensors needing grad (None: not replayable)."""
        b = self.producers.get(p.name)
        fn = _eager_call(b) if b is not None else None
        if fn is None or _elements((b,)) > _REPLAY_ELEMENTS:
            return None
        leaves = []

        def arg(x):
            if not isinstance(x, TensorProxy):
                return _argument(x)
            t = _standin(x, self.generator)
            if _differentiable_dtype(x):
                leaves.append(t.requires_grad_())
            return t

        try:
            result = fn(*tree_map(arg, b.args), **tree_map(arg, b.kwargs))
        except Exception:  # noqa: BLE001 (a leaf stands for it instead)
            return None
        names = [o.name for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
        made = torch_results(result)
        t = made[names.index(p.name)] if len(made) == len(names) else None
        if t is None or not t.requires_grad or list(t.shape) != list(_shape(p)):
            return None
        self.leaves += leaves
        return t

    def _arguments(self, b: BoundSymbol, needs_grad: frozenset):
        def arg(x):
            return self.tensor(x, needs_grad) if isinstance(x, TensorProxy) else _argument(x)

        return tree_map(arg, b.args), tree_map(arg, b.kwargs)

    def _set_version(self, g: int, version: int) -> None:
        for name, t in self.standins.items():
            if self.group.get(name) == g:
                set_version((t,), (version,))

    def play(self, e: _Event) -> None:
        """Replays a view or an in-place update; one that fails on the stand-ins only counts as an update."""
        b = e.bsym
        fn = _eager_call(b)
        try:
            with torch.set_grad_enabled(e.grad_enabled):
                args, kwargs = self._arguments(b, e.needs_grad)
                if e.kind == "restride":  # x.t_() changes x's strides and bumps its version
                    getattr(args[0], f"{b.sym.name}_")(*args[1:], **kwargs)
                elif fn is not None:
                    result = fn(*args, **kwargs)
                    if e.kind == "view":
                        outs = [o for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
                        made = torch_results(result)
                        if len(made) == len(outs):
                            self.standins.update((self._name(o.name), t) for o, t in zip(outs, made))
        except Exception:  # noqa: BLE001
            pass
        self._set_version(e.group, e.version)

    def message(self, read: _Read, earlier: list, later: list) -> str | None:
        """The message eager's backward raises at ``read`` (None: it does not raise, or the replay cannot tell)."""
        b = read.bsym
        fn = _eager_call(b)
        if fn is None or _elements((b, *(e.bsym for e in (*earlier, *later)))) > _REPLAY_ELEMENTS:
            return None
        import warnings

        cuda = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
        try:  # random ops replayed (dropout, bernoulli_) draw from generators the program's own draws must find intact
            with warnings.catch_warnings(), torch.enable_grad(), torch.random.fork_rng(devices=cuda):
                warnings.simplefilter("ignore")  # eager's warnings come when the program runs
                for e in earlier:
                    self.play(e)
                args, kwargs = self._arguments(b, read.needs_grad)
                for name, (g, v) in read.versions.items():
                    if self._name(name) in self.standins:
                        set_version((self.standins[self._name(name)],), (v,))
                result = fn(*args, **kwargs)
                outs = torch_results(result)
                names = [o.name for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
                self.standins.update((self._name(n), t) for n, t in zip(names, outs))
                for e in later:
                    self.play(e)
                differentiable = [t for t in outs if t.requires_grad]
                if not differentiable or not self.leaves:
                    return None
                torch.autograd.grad(differentiable, self.leaves, [torch.ones_like(t) for t in differentiable],
                                    allow_unused=True)
        except RuntimeError as e:
            return str(e) if _MODIFIED in str(e) else None
        except Exception:  # noqa: BLE001
            return None
        return None
