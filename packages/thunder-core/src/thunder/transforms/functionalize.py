"""Functionalization: the computation trace becomes pure.

In a traced program, ``a.add_(b)`` is ``ltorch.add_(a, b)`` whose decomposition computes ``t = add(a, b)``
and ends with ``prims.copy_(t, out=a)``. This pass replaces each such update by renaming: reads of ``a``
after it read ``t``; reads before it still read ``a``. Views are tracked: ``v = a[0]`` taken before an
update of ``a`` is re-derived from the new ``a`` when read after it, and an update through a view
(``v.mul_(2)``) writes back into its base (``setitem``, an inverse reshape or permutation), up the chain of
bases. An update of an input becomes ``x1 = prims.copy_to_out_(computed, out=x)`` where the program made
it (so it happens in the same grad mode as in eager); nothing reads ``computed`` afterwards, which is the
contract that lets executors alias the two, and later reads read ``x1``, the input after the update.
"""

from __future__ import annotations

from thunder.core import prims
from thunder.core.errors import UnsupportedError
from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.core.symbol import BoundSymbol, Symbol
from thunder.core.trace import TraceCtx, from_trace, timed_transform, tracectx
from thunder.extend import swap_proxies
from thunder.transforms.layouts import MAYBE_VIEWS, Layouts
from thunder.transforms.overwrites import snapshot_overwritten

__all__ = ["functionalize", "check_inplace_copies", "VIEW_OPS", "is_view", "updated_by", "UNTRACKED_ALIASES",
           "OWN_VERSION_COUNTER"]

# Symbols whose outputs alias their first argument, as in PyTorch; those in MAYBE_VIEWS (reshape, flatten,
# reshape_as, contiguous) only where the strides allow it, which thunder.transforms.layouts decides when it matters.
_RESHAPES = {"ltorch.reshape", "ltorch.view", "ltorch.view_as", "ltorch.reshape_as", "ltorch.flatten", "ltorch.unflatten",
             "ltorch.unsqueeze", "ltorch.squeeze", "ltorch.detach", "ltorch.data", "ltorch.contiguous"}
# aliases autograd does not track (x.detach(), x.data): writes through them bypass autograd, as in eager
UNTRACKED_ALIASES = frozenset({"ltorch.detach", "ltorch.data"})
# aliases with a version counter of their own: an update through x.data is not an update of x for autograd
OWN_VERSION_COUNTER = frozenset({"ltorch.data"})
_SPLITS = {"ltorch.split", "ltorch.chunk", "ltorch.tensor_split"}
_EXPANDS = {"ltorch.expand", "ltorch.expand_as", "ltorch.broadcast_to"}
# in-place ops eager lets write through overlapping memory (any other raises eager's error there): fills write one
# value everywhere; where the value written depends on the position (masked_fill_, index_fill_), thunder refuses
_FILLS = {"ltorch.fill_", "ltorch.zero_"}
_OVERLAP_NOT_SUPPORTED = {"ltorch.masked_fill_", "ltorch.index_fill_"}
VIEW_OPS = _RESHAPES | _SPLITS | _EXPANDS | {"ltorch.permute", "ltorch.transpose", "ltorch.t", "ltorch.movedim",
                                             "ltorch.getitem", "ltorch.select", "ltorch.narrow", "ltorch.unbind",
                                             "ltorch.diagonal", "ltorch.as_strided"}


def is_view(bsym: BoundSymbol) -> bool:
    """Whether ``bsym`` may return a view of its first argument: a reshape (MAYBE_VIEWS) eager does by copying is
    told apart by the jit's layouts (``Layouts.aliases``), which know the strides."""
    if bsym.sym.id not in VIEW_OPS:
        return False
    if bsym.sym.id == "ltorch.getitem":  # advanced indexing copies
        key = bsym.args[1] if len(bsym.args) > 1 else bsym.kwargs.get("key")
        keys = key if isinstance(key, tuple) else (key,)
        return not any(isinstance(k, (TensorProxy, list)) for k in keys)
    return True


def updated_by(bsym: BoundSymbol) -> TensorProxy | None:
    """The tensor an in-place bound symbol writes: its ``out=`` argument (``prims.copy_(value, out=t)``), else its
    first tensor argument (``ltorch.add_(t, 1)``)."""
    out = bsym.kwargs.get("out")
    if isinstance(out, TensorProxy):
        return out
    return next((p for p in bsym.flat_proxy_args if isinstance(p, TensorProxy)), None)


def _is_index_put(setitem: BoundSymbol) -> bool:
    """``x[idx] = value`` with a tensor or list in the index (a boolean mask, index lists): eager runs
    masked_fill_ or index_put_, which write into an expanded tensor (deprecated, with a warning) instead of
    raising; a memory location several selected positions share takes one of the values written there."""
    key = setitem.args[1]
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (TensorProxy, list)) for k in keys)


def _fill_through_expand(base: TensorProxy, value: TensorProxy):
    """The base after a fill (one value written to each chosen position) through an expand of it: a base element
    takes the written value if any of its repeated positions changed, as eager's repeated writes leave it."""
    import thunder.torch as ltorch
    from thunder.core import dtypes
    from thunder.torch.scalars import iinfo

    lead = value.ndim - base.ndim
    repeated = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(base.shape) if d == 1 and value.shape[lead + i] != 1)
    changed = ltorch.ne(value, ltorch.expand(base, tuple(value.shape)))
    kind = dtypes.uint8 if dtypes.is_boolean_dtype(value.dtype) else value.dtype
    lowest = -float("inf") if dtypes.is_float_dtype(kind) else iinfo(kind).min
    candidate = ltorch.where(changed, prims.convert_element_type(value, kind), lowest)
    written = ltorch.reshape(ltorch.amax(candidate, repeated, keepdim=True), tuple(base.shape))
    any_changed = ltorch.reshape(ltorch.any(changed, repeated, keepdim=True), tuple(base.shape))
    return ltorch.where(any_changed, prims.convert_element_type(written, base.dtype), base)


def _same_elements(base_shape, view_shape) -> bool:
    """Whether an expand from ``base_shape`` to ``view_shape`` repeated nothing (only size-1 dims were added)."""
    from thunder.core.shapes import numel

    return numel(base_shape) == numel(view_shape)


class _View:
    __slots__ = ("base", "bsym", "index", "derived_from", "decided")

    def __init__(self, base: str, bsym: BoundSymbol, index: int, derived_from: Proxy):
        # base: raw name of the aliased tensor; bsym: the view op as written (raw arguments); index: which
        # output of it (split-like ops have several); derived_from: the base version it was computed from
        self.base, self.bsym, self.index, self.derived_from = base, bsym, index, derived_from
        self.decided = bsym.sym.id not in MAYBE_VIEWS  # a view or a copy, by the strides: asked when it matters


def functionalize(trace: TraceCtx) -> TraceCtx:
    if any(b.subtraces for b in trace.bound_symbols):
        trace = _functionalize_subtraces(trace)
    if not any("inplace" in b.sym.tags for b in trace.bound_symbols):
        return trace
    with timed_transform("Functionalization (in-place updates become values)") as done:
        new = from_trace(trace)
        state = _State(new, trace)
        with tracectx(new):
            for bsym in trace.bound_symbols:
                state.visit(bsym)
            state.finish(trace)
        done(new)
    return new


def _functionalize_subtraces(trace: TraceCtx) -> TraceCtx:
    """Each sub-trace (a cond's branch, a loop's body) made pure on its own; one that updates its inputs (the
    operands, or outer values it reads) is refused, as PyTorch refuses it."""

    def pure(sub: TraceCtx) -> TraceCtx:
        f = functionalize(sub)
        for b in f.bound_symbols:
            if b.sym.id == "prims.copy_to_out_":
                where = f" (at {b.source})" if b.source is not None else ""
                raise UnsupportedError(
                    f"an in-place update of {b.kwargs['out'].name}{where}, which {sub.fn_name} receives from outside: "
                    "the body of a higher-order operator (torch.cond's branches, a loop's body) must not update its "
                    "inputs, as PyTorch requires; update a clone"
                )
        return f

    with timed_transform("Functionalization of sub-traces") as done:
        new = from_trace(trace)
        new.bound_symbols.extend(b.map_subtraces(pure) for b in trace.bound_symbols)
        done(new)
    return new


class _State:
    def __init__(self, trace: TraceCtx, source: TraceCtx):
        self.trace = trace
        self.inputs = {p.name for p in trace.args if isinstance(p, TensorProxy)}
        self.current: dict[str, Proxy] = {}  # raw name -> latest version
        self.views: dict[str, _View] = {}
        self.producers: dict[str, Symbol] = {}  # raw name -> the symbol that made it
        self.raw: dict[str, Proxy] = {p.name: p for p in trace.args if isinstance(p, Proxy)}  # raw name -> proxy
        self.updating: list[BoundSymbol] = []  # the in-place calls being visited, outermost first
        self.update_start = 0  # where the outermost one's own computations begin in the new trace
        # the jit's model of eager's layouts (traces made elsewhere: every input contiguous)
        self.layouts = (source.layouts or Layouts()).replay_from(source)
        # an input that is the same tensor as an earlier one is an alias of it: updates reach both
        import thunder.torch as ltorch

        for alias, first in trace.input_aliases.items():
            a, b = self.raw[alias], self.raw[first]
            same = BoundSymbol(ltorch.language_symbols["reshape"], (b, tuple(a.shape)), {}, a)
            self.views[alias] = _View(first, same, 0, b)
            self.views[alias].decided = True  # the very same tensor

    # reading -------------------------------------------------------------------------------------
    def view_of(self, name: str) -> _View | None:
        """How ``name`` aliases its base, or None where it does not (a reshape that copied)."""
        view = self.views.get(name)
        if view is not None and not view.decided:
            view.decided = True
            if not self.layouts.aliases(view.bsym, view.index):
                del self.views[name]
                return None
        return view

    def read(self, p: Proxy) -> Proxy:
        """The value the program sees when it reads ``p`` now."""
        view = self.views.get(p.name)
        if view is not None and self.read(self.raw[view.base]) is not view.derived_from:
            view = self.view_of(p.name)
        if view is not None:
            base_now = self.read(self.raw[view.base])
            if base_now is not view.derived_from:
                # the base changed after this view was taken: take the view again
                redone = self._emit_view(view.bsym, base_now)
                self.current[p.name] = tree_flatten(redone)[0][view.index]
                view.derived_from = base_now
        return self.current.get(p.name, p)

    def swap(self, tree):
        leaves, spec = tree_flatten(tree)
        return tree_unflatten([self.read(x) if isinstance(x, Proxy) else x for x in leaves], spec)

    @property
    def inplace_op(self) -> str | None:
        """The in-place symbol being functionalized (the outermost, as the user called it); ``x[mask] = scalar``
        (a mask or index lists) is eager's masked_fill_ or index_put_."""
        if not self.updating:
            return None
        outer = self.updating[0]
        if outer.sym.id == "ltorch.setitem_" and _is_index_put(outer):
            return "ltorch.masked_fill_"
        return outer.sym.id

    # visiting --------------------------------------------------------------------------------------
    def visit(self, bsym: BoundSymbol) -> None:
        if "inplace" in bsym.sym.tags and not bsym.sym.is_prim:
            if not self.updating:
                self.update_start = len(self.trace.bound_symbols)
            self.updating.append(bsym)
            for sub in bsym.subsymbols:
                self.visit(sub if sub.source is not None else sub.replace(source=bsym.source))
            self.updating.pop()
            return
        if bsym.sym.id == "prims.copy_":
            (computed,), out = bsym.args, bsym.kwargs["out"]
            self.update(out, self.read(computed), bsym, bsym.kwargs.get("grad_enabled", True))
            return
        args, kwargs = self.swap(bsym.args), self.swap(bsym.kwargs)
        # the decomposition reads the same values: rename them there too (autograd differentiates it)
        renamed = {old.name: new for old, new in zip(bsym.flat_args, tree_flatten((args, kwargs))[0])
                   if isinstance(old, Proxy) and new is not old}
        emitted = swap_proxies(bsym, renamed) if renamed else bsym
        self.trace.bound_symbols.append(emitted)
        for o in bsym.flat_proxy_outs:
            self.raw.setdefault(o.name, o)
            self.producers[o.name] = bsym.sym
        if is_view(bsym):
            base = bsym.args[0]
            self.raw.setdefault(base.name, base)
            for i, o in enumerate(bsym.flat_outs):
                if isinstance(o, TensorProxy):
                    self.views[o.name] = _View(base.name, bsym, i, args[0])

    def _emit_view(self, bsym: BoundSymbol, base: Proxy):
        """Re-runs the view symbol on a new base; returns its output."""
        return bsym.sym(base, *self.swap(bsym.args[1:]), **self.swap(bsym.kwargs))

    # updating --------------------------------------------------------------------------------------
    def update(self, target: Proxy, value: Proxy, where: BoundSymbol, grad_enabled: bool = True) -> None:
        if value is self.read(target):  # x.copy_(x): nothing changes
            return
        producer = self.producers.get(target.name)
        if producer is not None and "may_return_view" in producer.tags and self.layouts.may_alias_an_argument(target):
            where_txt = f" (at {where.source})" if where.source is not None else ""
            raise UnsupportedError(
                f"an in-place update of the result of {producer.id.removeprefix('ltorch.opaque.')}{where_txt}, which runs as "
                "an opaque PyTorch call: thunder cannot tell whether it is a view of its input; clone it first"
            )
        root = self._expanded_root(target.name)
        if root is not None:
            self._update_through_expand(target, self.raw[root], value, where, grad_enabled)
            return
        if target.name not in self.inputs and self.view_of(target.name) is None and self._held_elsewhere(value):
            # a.copy_(b), both the program's tensors: a holds b's values in memory of its own. Renaming a to b would
            # make them one object (returned or stored twice, one update changing both), so a gets a copy
            import thunder.torch as ltorch

            value = ltorch.clone(value)
            self.trace.bound_symbols[-1] = self.trace.bound_symbols[-1].replace(source=where.source)
        if target.name not in self.inputs and not grad_enabled and target.requires_grad:
            # eager keeps the tensor's autograd graph: gradients reaching it flow on as if it had not changed
            value = prims.update_without_grad(value, self.read(target))
            self.trace.bound_symbols[-1] = self.trace.bound_symbols[-1].replace(source=where.source)
        self.raw.setdefault(target.name, target)
        self.current[target.name] = value
        if target.name in self.inputs:
            if grad_enabled and value.requires_grad and not target.requires_grad:
                where_txt = f" (at {where.source})" if where.source is not None else ""
                raise UnsupportedError(
                    f"an in-place update of the input {target.name}{where_txt} with a value that requires grad: in eager "
                    "the input then requires grad itself (autograd records the update), which thunder does not "
                    "support yet; update a clone of the input, or detach the value"
                )
            # An input is written where the program wrote it (so grad mode and readers outside the trace see
            # eager's order); reads after it read the input again, through the copy's output.
            kwargs = {} if grad_enabled else {"grad_enabled": False}
            self.current[target.name] = prims.copy_to_out_(value, out=target, **kwargs)
            self.trace.bound_symbols[-1] = self.trace.bound_symbols[-1].replace(source=where.source)
        view = self.view_of(target.name)
        if view is None:
            return
        base_raw = self.raw[view.base]
        base_now = self.read(base_raw)
        new_base = self._write_back(view, base_now, value, where)
        # writes through .data / detach() bypass autograd, as in eager
        self.update(base_raw, new_base, where, grad_enabled and view.bsym.sym.id not in UNTRACKED_ALIASES)
        view.derived_from = self.current[view.base]

    def _held_elsewhere(self, value) -> bool:
        """Whether ``value`` is a tensor the program had before the in-place call being functionalized (an input,
        or an intermediate it made), rather than one that call computed."""
        if not isinstance(value, TensorProxy):
            return False
        if value.name in self.inputs:
            return True
        made_by_this_call = {o.name for b in self.trace.bound_symbols[self.update_start:] for o in b.flat_proxy_outs}
        return value.name not in made_by_this_call

    def _expanded_root(self, name: str) -> str | None:
        """The tensor at the end of ``name``'s chain of views when an ``expand`` is on the way, else None."""
        through_expand = False
        view = self.view_of(name)
        while view is not None:
            through_expand = through_expand or view.bsym.sym.id in _EXPANDS
            name = view.base
            view = self.view_of(name)
        return name if through_expand else None

    def _update_through_expand(self, target: TensorProxy, root: TensorProxy, value, where, grad_enabled) -> None:
        """An update of a view of an expanded tensor, as eager does it: refused where several of the written
        elements share memory (except by fill_, which writes one value everywhere), else written straight into
        the memory it covers in the root (as_strided_scatter at the strides eager's view has)."""
        import torch._prims_common as common

        import thunder.torch as ltorch

        m, rm = self.layouts.meta(target), self.layouts.meta(root)
        key = self._basic_setitem_key(target)
        if key is not None:  # ``v[key] = x`` writes only the elements v[key] selects, as eager does
            m, value = m[key], ltorch.getitem(value, key)
        if m.numel() == 0:
            return  # nothing is written, and eager checks no overlap of an empty tensor
        shared = [st == 0 and sz > 1 for sz, st in zip(m.shape, m.stride())]
        where_txt = f" (at {where.source})" if where.source is not None else ""
        if any(shared) and self.inplace_op in _OVERLAP_NOT_SUPPORTED:
            view = self.view_of(target.name)
            if view is not None and view.bsym.sym.id in _EXPANDS:
                # a fill straight through the expand: each element of its base takes the value written at its
                # positions; the base's own update reaches the root through its views
                base = self.raw[view.base]
                self.update(base, _fill_through_expand(self.read(base), value), where, grad_enabled)
                return
            raise UnsupportedError(
                f"{self.inplace_op.replace('ltorch.', 'torch.Tensor.')} of an expanded view{where_txt}, several of whose "
                "elements share memory, is not supported by thunder yet; clone the expanded tensor first")
        if any(shared) and self.inplace_op not in _FILLS:
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                               "memory location. Please clone() the tensor before performing the operation.")
        # the strides are eager's, relative to the root's memory: an input's layout is eager's; another root is
        # made contiguous first, which is its layout in eager where eager's is contiguous
        base = self.read(root)
        if root.name not in self.inputs and rm.is_contiguous():
            base = ltorch.contiguous(base)
        elif root.name not in self.inputs or not common.is_non_overlapping_and_dense_or_false(rm):
            raise UnsupportedError(
                f"an in-place update of a view of an expanded tensor{where_txt} whose base is neither an input with a "
                "dense layout nor contiguous is not supported by thunder yet; clone the expanded tensor first"
            )
        size = tuple(1 if s else d for d, s in zip(m.shape, shared))
        if any(shared):  # fill_: every memory location gets the one value; write each once
            value = ltorch.getitem(value, tuple(slice(0, 1) if s else slice(None) for s in shared))
        new_root = ltorch.as_strided_scatter(base, value, size, tuple(m.stride()), m.storage_offset() - rm.storage_offset())
        self.update(root, new_root, where, grad_enabled)

    def _basic_setitem_key(self, target: TensorProxy):
        """The key of ``target[key] = value`` being visited when it selects by ints and slices of plain numbers
        (a view of target), else None."""
        outer = self.updating[0] if self.updating else None
        if outer is None or outer.sym.id != "ltorch.setitem_" or outer.args[0].name != target.name:
            return None
        key = outer.args[1] if isinstance(outer.args[1], tuple) else (outer.args[1],)
        parts = [p for k in key for p in ((k.start, k.stop, k.step) if isinstance(k, slice) else (k,))]
        if not all(p is None or p is Ellipsis or type(p) is int for p in parts):
            return None
        return key

    def _write_back(self, view: _View, base: TensorProxy, value: TensorProxy, where: BoundSymbol):
        import thunder.torch as ltorch

        sid, args, kwargs = view.bsym.sym.id, view.bsym.args, view.bsym.kwargs
        if sid in _RESHAPES:
            return ltorch.reshape(value, base.shape)
        if sid == "ltorch.permute":
            dims = args[1:] if len(args) > 2 or not isinstance(args[1], (tuple, list)) else args[1]
            dims = [d % base.ndim for d in dims]
            return ltorch.permute(value, [dims.index(i) for i in range(len(dims))])
        if sid in ("ltorch.transpose", "ltorch.t"):
            return ltorch.transpose(value, *args[1:3]) if sid == "ltorch.transpose" else ltorch.t(value)
        if sid == "ltorch.movedim":
            return ltorch.movedim(value, args[2], args[1])
        if sid == "ltorch.getitem":
            return ltorch.setitem(base, args[1], value)
        if sid == "ltorch.select":
            dim, index = (list(args[1:3]) + [kwargs.get("dim"), kwargs.get("index")])[:2]
            return ltorch.setitem(base, (slice(None),) * (dim % base.ndim) + (index,), value)
        if sid == "ltorch.narrow":
            dim, start, length = args[1:4]
            return ltorch.setitem(base, (slice(None),) * (dim % base.ndim) + (slice(start, start + length),), value)
        if sid == "ltorch.unbind":
            dim = (args[1] if len(args) > 1 else kwargs.get("dim", 0)) % base.ndim
            return ltorch.setitem(base, (slice(None),) * dim + (view.index,), value)
        if sid == "ltorch.diagonal":
            return ltorch.diagonal_scatter(base, value, *args[1:], **kwargs)
        if sid == "ltorch.as_strided":
            return ltorch.as_strided_scatter(base, value, *args[1:], **kwargs)
        if sid in _SPLITS:
            dim = kwargs.get("dim", args[2] if len(args) > 2 else 0) % base.ndim
            outs = tree_flatten(view.bsym.output)[0]
            offset = 0
            for o in outs[: view.index]:
                offset = offset + o.shape[dim]
            key = (slice(None),) * dim + (slice(offset, offset + outs[view.index].shape[dim]),)
            return ltorch.setitem(base, key, value)
        if sid in _EXPANDS and _same_elements(base.shape, value.shape):
            return ltorch.reshape(value, base.shape)  # nothing was broadcast: element i is base element i
        if sid in _EXPANDS and any("fills" in s.sym.tags for s in self.updating):
            return _fill_through_expand(base, value)
        # several elements of an expanded view share memory: eager refuses the write with this error
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")

    # the end ----------------------------------------------------------------------------------------
    def finish(self, trace: TraceCtx) -> None:
        leaves, spec = tree_flatten(trace.output)
        # An updated input returned is the input itself, as in PyTorch (already holding its final value); any
        # other leaf is the value it has now (which may be an input's value from before a later update).
        values = {i for i, x in enumerate(leaves) if isinstance(x, Proxy) and x.name not in self.inputs}
        self.trace.output = tree_unflatten([self.read(x) if i in values else x for i, x in enumerate(leaves)], spec)
        snapped = snapshot_overwritten(self.trace, values)
        self.trace.bound_symbols, self.trace.output = snapped.bound_symbols, snapped.output
        self.trace.names |= snapped.names  # the snapshots' names are taken: a later pass must not reuse them


def check_inplace_copies(trace: TraceCtx) -> None:
    """Enforces copy_to_out_'s contract: ``computed`` is not read after the copy (executors may have made
    ``out`` alias it). Raises with the offending line; ``thunder.jit(..., disable_inplace_copy_check=True)``
    skips the check."""
    copied: dict[str, BoundSymbol] = {}
    for bsym in trace.bound_symbols:
        for a in bsym.flat_proxy_args:
            first = copied.get(a.name)
            if first is not None and bsym.sym.id != "python.del":
                raise UnsupportedError(
                    f"prims.copy_to_out_({a.name}, out={first.kwargs['out'].name}) promises that {a.name} is not used "
                    f"afterwards, but {bsym.sym.name} reads it; this is a bug in a transform or an executor: please "
                    "file an issue (disable_inplace_copy_check=True skips this check)"
                )
        if bsym.sym.id == "prims.copy_to_out_" or bsym.sym.name.endswith("copy_to_out_"):
            copied[bsym.args[0].name] = bsym
    for leaf in tree_flatten(trace.output)[0]:
        if isinstance(leaf, Proxy) and leaf.name in copied:
            raise UnsupportedError(f"{leaf.name} is returned after prims.copy_to_out_ consumed it; please file an issue")
