"""Autograd through traces: a computation trace becomes a forward trace and a backward trace.

The forward trace computes the outputs and what backward needs (the *saved* values); the backward
trace maps the saved values and one cotangent per differentiable output to the gradients of the
inputs that require grad. Each bound symbol is differentiated by the first of:

1. a gradient rule registered by the executor that will run it (the first in the list that can), e.g. the
   torch executor's eager backward kernels (:mod:`thunder.executors.torch_grad`),
2. a rule in :mod:`thunder.grad` (every prim has one; torch-language symbols may have fused rules),
3. its decomposition, symbol by symbol,
4. PyTorch's autograd, for a symbol with neither (:mod:`thunder.grad.torch_island`).

Symbols whose inputs carry no gradient, or that run under ``torch.no_grad()`` inside the program,
are copied to the forward trace unchanged.
"""

from __future__ import annotations

from thunder.core import dtypes, prims
from thunder.core.errors import UnsupportedError
from thunder.core.prims import AnyProxy
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy, pyval
from thunder.core.pytree import tree_flatten
from thunder.core.symbol import BoundSymbol, Symbol
from thunder.core.trace import TraceCtx, TraceProvenance, from_trace, tracectx
from thunder.extend import swap_proxies
from thunder.grad.registry import _active as active
from thunder.grad.registry import grad_rule, is_nondifferentiable, saved_by_eager
from thunder.transforms.placed_sums import merge_placed_sums, merge_scattered_sums

__all__ = ["ForwardBackward", "requires_grad", "split_forward_backward"]


class ForwardBackward:
    """The split of one computation trace.

    ``forward(*args) -> (flat outputs, saved tensors, other saved values)``;
    ``backward(*saved, *cotangents) -> gradients``, with ``saved`` the tensors then the other values, one
    cotangent per output in ``differentiable_outputs`` (positions in the flat outputs) and one gradient
    per input in ``differentiable_inputs`` (positions in the computation's arguments).
    """

    __slots__ = ("forward", "backward", "saved", "output_spec", "differentiable_outputs", "differentiable_inputs")

    def __init__(self, forward, backward, saved, output_spec, differentiable_outputs, differentiable_inputs):
        self.forward, self.backward, self.saved = forward, backward, saved
        self.output_spec = output_spec
        self.differentiable_outputs, self.differentiable_inputs = differentiable_outputs, differentiable_inputs


def _differentiable_dtype(p) -> bool:
    return isinstance(p, TensorProxy) and (dtypes.is_float_dtype(p.dtype) or dtypes.is_complex_dtype(p.dtype))


def requires_grad(trace: TraceCtx) -> bool:
    """Whether calling ``trace`` needs a backward: grad mode on and some input requiring grad."""
    return trace.grad_enabled and any(_differentiable_dtype(a) and a.requires_grad for a in trace.args)


def order_saved(saved) -> list:
    """Tensors first: the forward returns them apart from the other saved values (numbers, an island's graph), so
    the autograd node hands them to ``save_for_backward`` as they come, with no sorting on each call."""
    return [p for p in saved if isinstance(p, TensorProxy)] + [p for p in saved if not isinstance(p, TensorProxy)]


def forward_output(flat_out, saved) -> tuple:
    """The forward trace's output for ``saved`` in :func:`order_saved` order."""
    n = sum(isinstance(p, TensorProxy) for p in saved)
    return tuple(flat_out), tuple(saved[:n]), tuple(saved[n:])


def tensor_bytes(p) -> int:
    """Bytes of a tensor proxy at the sizes seen when tracing (0 for anything else)."""
    if not isinstance(p, TensorProxy):
        return 0
    n = p.dtype.bytes
    for d in p.shape:
        n *= int(pyval(d))
    return n


def saved_bytes(saved) -> int:
    """Bytes of the tensors saved for backward, each distinct tensor once."""
    return sum(tensor_bytes(p) for p in {p.name: p for p in saved}.values())


def _same_shape(x, y) -> bool:
    return len(x) == len(y) and all(a is b or (isinstance(a, int) and isinstance(b, int) and a == b) or
                                    isinstance(a, NumberProxy) or isinstance(b, NumberProxy) for a, b in zip(x, y))


def _pairs(arg, grad, out: list) -> None:
    """(proxy, gradient) pairs of an argument tree and the gradient tree a rule returned for it."""
    if grad is None:
        return
    if isinstance(arg, TensorProxy):
        out.append((arg, grad))
    elif isinstance(arg, (tuple, list)) and isinstance(grad, (tuple, list)):
        for a, g in zip(arg, grad):
            _pairs(a, g, out)


def _bind_names(bsym: BoundSymbol, names: dict) -> list:
    """Arguments of ``bsym`` by its meta's parameter names, paired with a rule's ``{name: gradient}``."""
    import inspect

    bound = inspect.signature(bsym.sym.meta).bind(*bsym.args, **bsym.kwargs)
    out: list = []
    for name, grad in names.items():
        _pairs(bound.arguments.get(name), grad, out)
    return out


class _Differentiator:
    def __init__(self, trace: TraceCtx, executors, *, recompute_into: "_Differentiator | None" = None,
                 active=()):
        """``recompute_into``: the differentiator whose backward is being recorded; this one recomputes a
        composite's decomposition there (its forward is recorded into that backward trace) from ``active``."""
        self.trace, self.executors = trace, executors
        self.env: dict[str, Proxy] = {}  # original name -> the proxy now holding that value
        self.tape: list = []  # (bound symbol, outputs, backprop(cotangents) -> [(proxy, grad)])
        # output name -> eager's error when the backward reaches the op making it (transforms/saved_versions.py)
        self.fails_in_backward: dict[str, str] = {}
        self.recomputing = recompute_into is not None  # then composites are decomposed right away
        # depth of the symbol being visited (0: top level); an island at the top level may give None gradients
        self.depth = 1 if self.recomputing else 0
        if self.recomputing:
            from thunder.core.trace import get_tracectx

            self.fw, self.active, self.grad_enabled = get_tracectx(), set(active), True
            # one rename table for all: names the inner rules make are renamed in the whole backward
            self.rename, self.readers = recompute_into.rename, recompute_into.readers
            return
        self.fw = from_trace(trace)  # where the forward computation is recorded
        self.active: set[str] = set()
        self.rename: dict[str, Proxy] = {}  # name a rule made -> the original output it stands for
        self.grad_enabled = trace.grad_enabled
        # input name -> how many top-level symbols read it
        self.readers: dict[str, int] = {}
        for s in trace.bound_symbols:
            for name in {p.name for p in s.flat_proxy_args}:
                self.readers[name] = self.readers.get(name, 0) + 1
        for a in trace.args:
            if _differentiable_dtype(a) and a.requires_grad:
                self._refuse_complex(a, None)
                self.active.add(a.name)

    # forward --------------------------------------------------------------------------------------
    def emit(self, bsym: BoundSymbol) -> None:
        self.fw.scopes[-1].append(bsym)

    def visit(self, bsym: BoundSymbol, source=None) -> None:
        b = swap_proxies(bsym, self.env) if self.env else bsym
        if b.source is None and source is not None:
            b = b.replace(source=source)
        sid = b.sym.id
        if sid == "prims.set_grad_enabled":
            self.emit(b)
            self.grad_enabled = bool(b.args[0])
            return
        if sid == "prims.update_without_grad":  # whatever the grad mode: the gradient reaches the tensor updated
            self._update_without_grad(b)
            return
        if sid in ("prims.copy_", "prims.copy_to_out_") and b.kwargs["out"].name in self.active:
            self._copy(b)
            return
        if sid == "prims.copy_to_out_" and self._makes_an_input_require_grad(b):
            where = f" (at {b.source})" if b.source is not None else ""
            raise UnsupportedError(
                f"an in-place update of the input {b.kwargs['out'].name}{where} with a value that requires grad: in "
                "eager the input then requires grad itself (autograd records the update), which thunder does not "
                "support yet; update a clone of the input, or detach the value"
            )
        inputs = [p for p in b.flat_proxy_args if isinstance(p, TensorProxy) and p.name in self.active]
        outputs = [o for o in b.flat_proxy_outs if _differentiable_dtype(o)]
        if b.subsymbols and inputs and outputs:
            # a composite whose differentiable outputs do not depend on its active inputs (full_like reads
            # only the shape): eager gives them requires_grad=False, and so do we
            reached = _reached_outputs(b, {p.name for p in inputs})
            outputs = [o for o in outputs if o.name in reached]
        if not inputs and outputs and self.grad_enabled and sid in _READS_PARAMETERS_INSIDE and any(
                o.requires_grad for o in outputs):
            self._island(b)  # no input requires grad, but parameters it reads do: PyTorch accumulates theirs
            return
        if not inputs or not outputs or not self.grad_enabled or is_nondifferentiable(sid):
            self.emit(b)  # a copy into a tensor that does not require grad (a BatchNorm running stat) too
            return
        for p in inputs:
            self._refuse_complex(p, b)
        rule = self._rule(b)
        if rule is not None:
            self._apply_rule(b, rule)
        elif _decomposes(b) and not self.recomputing and _cheap(b):
            self._recompute_in_backward(b)
        elif _decomposes(b):
            self.depth += 1
            for sub in b.subsymbols:
                self.visit(sub, b.source)
            self.depth -= 1
        else:
            self._island(b)
        self._keep_what_eager_saves(b, outputs)

    def _keep_what_eager_saves(self, b: BoundSymbol, outputs: list) -> None:
        """Where eager's node for ``b`` saves a tensor its gradient here does not read (``gather``'s input), the
        backward takes it all the same, at the place of that node (the first the backward reaches of the ops after
        it): the node checks its version in eager's order, so a caller's in-place update of it fails the backward
        with eager's message, naming that tensor."""
        params = saved_by_eager(b.sym.id)
        if not params:
            return
        import inspect

        bound = inspect.signature(b.sym.meta).bind(*b.args, **b.kwargs).arguments
        kept = tuple(p for p in (bound.get(n) for n in params) if isinstance(p, TensorProxy))
        if not kept:
            return

        def backprop(cotangents):
            if any(c is not None for c in cotangents):
                from thunder.core.trace import get_tracectx

                get_tracectx().scopes[-1].append(BoundSymbol(_SAVED_BY_EAGER, kept, {}, None, (), b.source))
            return []

        self.tape.append((b, outputs, backprop))

    def _refuse_complex(self, p, b) -> None:
        if dtypes.is_complex_dtype(p.dtype):
            where = f" ({b.sym.id} at {b.source})" if b is not None and b.source is not None else ""
            raise UnsupportedError(
                f"thunder's autograd does not differentiate complex tensors yet: {p.name} is {p.dtype}{where}; "
                "call the function under torch.no_grad(), or with inputs that do not require grad"
            )

    def _rule(self, b: BoundSymbol):
        # The executor that will run the symbol (the first that can) decides: its own rule (the torch executor's
        # backward kernels), else the built-in one, which a fusion executor claiming the decomposition fuses.
        for ex in self.executors:
            if ex.can_execute(b):
                rule = ex.grad_rule(b)
                return rule if rule is not None else grad_rule(b.sym.id)
        return grad_rule(b.sym.id)

    def _makes_an_input_require_grad(self, b: BoundSymbol) -> bool:
        """A copy into an input that does not require grad, of a value that does, with grad recorded (functionalization
        refuses those it sees; a value made through a view's write-back is only known to need grad here)."""
        value = b.args[0]
        return (b.kwargs.get("grad_enabled", True) and self.grad_enabled and isinstance(value, TensorProxy)
                and value.name in self.active and any(a.name == b.kwargs["out"].name for a in self.trace.args))

    def _update_without_grad(self, b: BoundSymbol) -> None:
        self.emit(b)
        old = b.args[1]
        if old.name in self.active and _differentiable_dtype(b.output):
            self.active.add(b.output.name)
            self.tape.append((b, [b.output], lambda cots: [(old, c) for c in cots if c is not None]))

    def _copy(self, b: BoundSymbol) -> None:
        out = b.kwargs["out"]
        if not (b.kwargs.get("grad_enabled", True) and self.grad_enabled):
            # a write through .data or under no_grad: autograd does not see it, so the updated tensor is
            # still the input to autograd: gradients of later reads flow to it
            self.emit(b)
            updated = list(b.flat_proxy_outs)
            self.active.update(o.name for o in updated)
            self.tape.append((b, updated, lambda cots: [(out, c) for c in cots if c is not None]))
            return
        arg = next((a for a in self.trace.args if a.name == out.name), None)
        if arg is not None and arg.outside is not None and arg.outside("is_leaf"):
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")  # eager's
        where = f" at {b.source}" if b.source is not None else ""
        raise UnsupportedError(
            f"an in-place update of {out.name}, which requires grad, while gradients are recorded{where}: "
            "thunder's autograd does not differentiate in-place updates of inputs yet; update a clone, or do "
            "the update under torch.no_grad()"
        )

    def _apply_rule(self, b: BoundSymbol, rule) -> None:
        scope = self.fw.push_scope()
        active.append(self.active)
        try:
            out, backward = rule(*b.args, **b.kwargs)
        finally:
            active.pop()
            self.fw.pop_scope()
        made = {o.name for s in scope for o in s.flat_proxy_outs}
        new_flat = tree_flatten(out)[0]
        old_flat = b.flat_outs
        if len(new_flat) != len(old_flat):
            raise AssertionError(f"the grad rule of {b.sym.id} returned {len(new_flat)} outputs, the symbol has "
                                 f"{len(old_flat)}")
        aliased = set()
        for new, old in zip(new_flat, old_flat):
            if isinstance(new, Proxy) and isinstance(old, Proxy) and new.name != old.name:
                if new.name in made:
                    self.rename[new.name] = old
                else:  # the rule returned an existing value: later reads of old read it
                    self.env[old.name] = new
                    aliased.add(old.name)
        made |= self._sizes_named_as_traced(scope, new_flat, old_flat)
        rename = {k: v for k, v in self.rename.items() if k in made}
        for s in scope:
            s = swap_proxies(s, rename) if rename else s
            self.emit(s if s.source is not None else s.replace(source=b.source))
        outs = [o for o in old_flat if isinstance(o, Proxy)]
        self.active.update(o.name for o in outs if _differentiable_dtype(o) and o.name not in aliased)

        def backprop(cotangents):
            cotangents = [None if o.name in aliased else c for o, c in zip(outs, cotangents)]
            if all(c is None for c in cotangents):
                return []
            from thunder.grad.prim_rules import zeros_like  # the rules load when first differentiating

            cotangents = [zeros_like(o) if c is None and _differentiable_dtype(o) else c
                          for o, c in zip(outs, cotangents)]
            from thunder.core.trace import get_tracectx

            scope = get_tracectx().scopes[-1]
            start = len(scope)
            grads = backward(*cotangents)
            pairs: list = []
            if isinstance(grads, dict):
                pairs = _bind_names(b, grads)
            else:
                _pairs(b.args, tuple(grads) if isinstance(grads, (tuple, list)) else (grads,), pairs)
            pairs = [(p, g) for p, g in pairs if p.name in self.active]
            _drop_unasked(scope, start, {g.name for _, g in pairs if isinstance(g, Proxy)})
            return pairs

        self.tape.append((b, outs, backprop))

    def _sizes_named_as_traced(self, scope, new_flat, old_flat) -> set:
        """The rule traced the symbol again, naming the symbolic sizes it computes anew (chunk's ``i14`` for the
        ``i7`` of the traced outputs' shapes): each takes the traced name, which later symbols read (the sizes of a
        slice of the output). Returns the names renamed. A traced name defined before (an input's size) stays."""
        computed = {o.name for s in scope for d in s.number_definitions() for o in d.flat_proxy_outs}
        pairs = [(dn, do) for new, old in zip(new_flat, old_flat)
                 if isinstance(new, TensorProxy) and isinstance(old, TensorProxy)
                 for dn, do in zip(new.shape, old.shape)
                 if isinstance(dn, NumberProxy) and isinstance(do, NumberProxy) and dn.name != do.name
                 and dn.name in computed]
        if not pairs:
            return set()
        defined = {p.name for p in self.fw.args} | {o.name for b in self.fw.bound_symbols for o in b.flat_proxy_outs} \
            | {o.name for b in self.fw.bound_symbols for d in b.number_definitions() for o in d.flat_proxy_outs}
        renamed = set()
        for dn, do in pairs:
            if do.name not in defined and dn.name not in self.rename:
                self.rename[dn.name] = do
                renamed.add(dn.name)
        return renamed

    def _island(self, b: BoundSymbol) -> None:
        from thunder.grad.torch_island import backward_symbol, island_symbol

        inputs, seen = [], set()
        for p in (*b.flat_proxy_args, *_numbers_read_inside(b)):
            if p.name not in seen:
                seen.add(p.name)
                inputs.append(p)
        differentiable = tuple(isinstance(p, TensorProxy) and p.name in self.active for p in inputs)
        # None (no gradient, as in eager) only for an input this island alone reads; anything else has other
        # gradient contributions or feeds further backward computation, so it gets zeros
        inputs_of_trace = {a.name for a in self.trace.args}
        sole = tuple(self.depth == 0 and p.name in inputs_of_trace and self.readers.get(p.name) == 1
                     for p, d in zip(inputs, differentiable) if d)
        sym = island_symbol(b, inputs, differentiable, sole)
        with tracectx(self.fw):
            graph = AnyProxy(self.fw.make_unique_name(f"{b.sym.name}_graph"))
        self.emit(BoundSymbol(sym, tuple(inputs), {}, (b.output, graph), (b,), b.source))  # b: printed as a comment
        outs = list(b.flat_proxy_outs)
        # an opaque call's outputs carry gradients where PyTorch's autograd tracks them (its meta run's
        # requires_grad: histc's result does not, whatever its input)
        from thunder.torch.opaque import OPAQUE_ID_PREFIX

        opaque = b.sym.id.startswith(OPAQUE_ID_PREFIX)
        self.active.update(o.name for o in outs if _differentiable_dtype(o) and (o.requires_grad or not opaque))
        leaves = [p for p, d in zip(inputs, differentiable) if d]

        def backprop(cotangents):
            if all(c is None for c in cotangents):
                return []
            by_name = {o.name: c for o, c in zip(outs, cotangents)}
            flat_cots = [by_name.get(o.name) if isinstance(o, Proxy) else None for o in b.flat_outs]
            grads = tuple(TensorProxy(shape=p.shape, dtype=p.dtype, device=p.device) for p in leaves)
            from thunder.core.trace import get_tracectx

            get_tracectx().scopes[-1].append(
                BoundSymbol(backward_symbol(), (graph, tuple(flat_cots)), {}, grads, (), b.source))
            return list(zip(leaves, grads))

        self.tape.append((b, outs, backprop))

    def _recompute_in_backward(self, b: BoundSymbol) -> None:
        """A composite of cheap prims runs as itself in the forward (one call); its backward recomputes the
        decomposition from the composite's inputs and differentiates that, so nothing inside it is saved."""
        self.emit(b)
        # run by an operator executor (the torch executor), a recomputed op is a kernel eager does not run: where the
        # backward needs the composite's outputs themselves (rsqrt's, exp's), it reads them, saved, as eager does
        fused = any(ex.kind == "fusion" and ex.can_execute(b) for ex in self.executors)
        outs = list(b.flat_proxy_outs)
        returned = {o.name for o in tree_flatten(self.trace.output)[0] if isinstance(o, Proxy)} if fused else ()
        reached = _reached_outputs(b, self.active)
        self.active.update(o.name for o in outs if o.name in reached)
        # each input once: its cotangent below already sums every use inside the decomposition
        inputs = list({p.name: p for p in b.flat_proxy_args if isinstance(p, TensorProxy) and p.name in self.active}
                      .values())

        def backprop(cotangents):
            if all(c is None for c in cotangents):
                return []
            from thunder.core.trace import get_tracectx

            bw = get_tracectx()
            start = len(bw.scopes[-1])
            # fresh names for everything the decomposition defines: the backward may also hold the originals
            fresh = {}
            for sub in _walk(b.subsymbols):
                for o in sub.flat_proxy_outs:
                    if isinstance(o, TensorProxy) and o.name not in fresh:
                        fresh[o.name] = TensorProxy(bw.make_unique_name(f"{o.name}_r"), shape=o.shape, dtype=o.dtype,
                                                    device=o.device)
            inner = _Differentiator(self.trace, self.executors, recompute_into=self, active=(p.name for p in inputs))
            for sub in b.subsymbols:
                inner.visit(swap_proxies(sub, fresh), b.source)
            cots = {}
            for o, c in zip(outs, cotangents):
                if c is not None:
                    inner._accumulate(cots, fresh.get(o.name, o), c, b)
            inner.run_tape(cots)
            grads = [(p, cots[p.name]) for p in inputs if p.name in cots]
            # the call's own outputs are read too where fused: they live anyway, and the caller's in-place update
            # of one then fails the backward as eager's does where eager saves it (tanh's result)
            read = {fresh[o.name].name: o for o in outs if o.name in fresh and (not fused or o.name in returned)}
            if read:
                _read_saved_outputs(bw.scopes[-1], start, read,
                                    {self.rename[g.name].name if g.name in self.rename else g.name for _, g in grads},
                                    self.rename)
            return grads

        self.tape.append((b, outs, backprop))

    # backward -------------------------------------------------------------------------------------
    def run_tape(self, cotangents: dict) -> None:
        """Propagates ``cotangents`` (name -> cotangent) back through the recorded symbols, in place."""
        for b, outs, backprop in reversed(self.tape):
            for o in outs:
                fails = self.fails_in_backward.pop(o.name, None)
                if fails is not None and cotangents.get(o.name) is not None:
                    message, entry_version = fails
                    cotangents[o.name] = prims.raise_in_backward(cotangents[o.name], message, entry_version)
            cots = [cotangents.get(o.name) for o in outs]
            for proxy, grad in backprop(cots):
                if grad is not None and proxy.name in self.active:
                    self._accumulate(cotangents, proxy, grad, b)

    def build_backward(self, flat_out: list) -> tuple[TraceCtx, list, list]:
        bw = TraceCtx("backward")
        bw.grad_enabled = False  # it runs inside the autograd node's backward (once differentiable)
        bw.names = set(self.fw.names)
        bw._counters = dict(self.fw._counters)
        cotangents: dict[str, TensorProxy] = {}
        cot_args, positions = [], []
        with tracectx(bw):
            inputs = {a.name for a in self.trace.args}
            for i, p in enumerate(flat_out):
                # an input returned as it is goes back to the caller as that very tensor, outside the node
                if isinstance(p, TensorProxy) and p.name in self.active and p.name not in inputs:
                    c = TensorProxy(bw.make_unique_name(f"grad_{p.name}"), shape=p.shape, dtype=p.dtype,
                                    device=p.device)
                    cot_args.append(c)
                    positions.append(i)
                    self._accumulate(cotangents, p, c, None)
            self.run_tape(cotangents)
        grads = tuple(cotangents.get(a.name) if isinstance(a, TensorProxy) and a.name in self.active else None
                      for a in self.trace.args)
        differentiable_inputs = [i for i, a in enumerate(self.trace.args)
                                 if isinstance(a, TensorProxy) and a.name in self.active]
        bw.output = tuple(grads[i] for i in differentiable_inputs)
        if self.rename:
            bw.bound_symbols = [swap_proxies(s, self.rename) for s in bw.bound_symbols]
            bw.output = tuple(self.rename.get(g.name, g) if isinstance(g, Proxy) else g for g in bw.output)
        bw.bound_symbols = merge_placed_sums(bw.bound_symbols, bw.output, lambda: bw.make_unique_name("placed"))
        bw.bound_symbols = merge_scattered_sums(bw.bound_symbols, bw.output)
        # what backward reads from the forward: the saved values, in the order the backward first reads them (eager's
        # nodes', reached from the last op back, whose version checks come in that order)
        defined = {c.name for c in cot_args}
        saved, seen = [], set()
        for s in bw.bound_symbols:
            for p in s.flat_proxy_args:
                if p.name not in defined and p.name not in seen:
                    seen.add(p.name)
                    saved.append(p)
            defined.update(o.name for o in s.flat_proxy_outs)
            # sizes its decomposition computes (cat's summed dim): dispatch keeps them defined for later readers
            defined.update(o.name for d in s.number_definitions() for o in d.flat_proxy_outs)
        bw.bound_symbols = [s for s in bw.bound_symbols if s.sym is not _SAVED_BY_EAGER]
        for g in bw.output:
            if isinstance(g, Proxy) and g.name not in defined and g.name not in seen:
                seen.add(g.name)
                saved.append(g)
        # sizes read inside decompositions (``reshape(t, -1)`` computes ``s2 * s3``) come out when the backward
        # is dispatched: they are saved too, also where a later symbol defines the size again (a recomputed slice's
        # length, fuzz seed 700874: read before that, it was unbound)
        inner_defined = {c.name for c in cot_args}
        for s in bw.bound_symbols:
            for sub in _walk(s.subsymbols):
                for p in sub.flat_proxy_args:
                    if isinstance(p, NumberProxy) and p.name not in inner_defined and p.name not in seen:
                        seen.add(p.name)
                        saved.append(p)
                inner_defined.update(o.name for o in sub.flat_proxy_outs)
            inner_defined.update(o.name for o in s.flat_proxy_outs)
            inner_defined.update(o.name for d in s.number_definitions() for o in d.flat_proxy_outs)
        bw.args = saved + cot_args
        return bw, positions, differentiable_inputs

    def _accumulate(self, cotangents: dict, proxy: TensorProxy, grad, b) -> None:
        if not isinstance(grad, TensorProxy) or grad.dtype is not proxy.dtype or not _same_shape(grad.shape,
                                                                                                  proxy.shape):
            what = b.sym.id if b is not None else "the output"
            got = grad.type_string() if isinstance(grad, TensorProxy) else type(grad).__name__
            raise AssertionError(f"internal error: the grad rule of {what} returned a {got} gradient for "
                                 f"{proxy.name} ({proxy.type_string()}); please file an issue")
        prev = cotangents.get(proxy.name)
        cotangents[proxy.name] = grad if prev is None else prims.add(prev, grad)


def _drop_unasked(scope: list, start: int, results: set) -> None:
    """Drops from ``scope[start:]`` (what one rule's backward recorded) what computes none of ``results``, the
    gradients asked for: a rule may compute them all (both of matmul's), where eager's node computes, and saves the
    tensors for, only those of the inputs that require grad; a caller's update of another tensor is then fine."""
    needed, kept = set(results), []
    for s in reversed(scope[start:]):
        made = [*s.flat_proxy_outs, *(o for d in s.number_definitions() for o in d.flat_proxy_outs)]
        if not s.flat_proxy_outs or "side_effect" in s.sym.tags or any(o.name in needed for o in made):
            kept.append(s)
            needed.update(p.name for p in s.flat_proxy_args)
            needed.update(d.name for o in s.flat_proxy_outs if isinstance(o, TensorProxy) for d in o.shape
                          if isinstance(d, NumberProxy))
    scope[start:] = reversed(kept)


def _read_saved_outputs(scope: list, start: int, outputs: dict, results: set, rename: dict) -> None:
    """In ``scope[start:]`` (a recomputed decomposition and its backward), reads of the recomputed outputs (fresh name
    -> original output) read the originals instead, and what then computes nothing ``results`` need is dropped."""
    def name(p):  # names a rule made are renamed to the outputs they stand for when the backward is built
        return rename[p.name].name if p.name in rename else p.name

    outputs = {**outputs, **{k: outputs[v.name] for k, v in rename.items() if v.name in outputs}}
    body = [s if any(name(o) in outputs for o in s.flat_proxy_outs) else swap_proxies(s, outputs)
            for s in scope[start:]]

    needed, kept = set(results), []
    for s in reversed(body):
        if any(name(o) in needed for o in s.flat_proxy_outs) or "side_effect" in s.sym.tags:
            kept.append(s)
            needed.update(name(p) for p in s.flat_proxy_args)
            # a symbolic size of a kept tensor (a cat's summed length) is read by later checks of its shape
            needed.update(d.name for o in s.flat_proxy_outs if isinstance(o, TensorProxy) for d in o.shape
                          if isinstance(d, NumberProxy))
    scope[start:] = reversed(kept)


# Where eager's node saves a tensor the backward does not read (``_keep_what_eager_saves``): the backward takes it
# (and checks its version), and drops this mark before it is transformed further
_SAVED_BY_EAGER = Symbol("saved_by_eager", lambda *tensors: None, id="thunder.saved_by_eager", tags=("side_effect",))


# Prims cheap enough to recompute in backward: elementwise, shape, reductions and gathers (memory-bound, no
# randomness, no side effects). Matmuls are not: recomputing one costs as much as the forward did.
_CHEAP_PRIMS = frozenset({
    "prims.convert_element_type", "prims.broadcast_in_dim", "prims.reshape", "prims.transpose", "prims.squeeze",
    "prims.slice", "prims.cat", "prims.flip", "prims.where", "prims.full", "prims.iota", "prims.sum", "prims.prod",
    "prims.amax", "prims.amin", "prims.var", "prims.argmax", "prims.argmin", "prims.take", "prims.take_along_axis",
    "prims.index", "prims.device_put", "prims.true_divide_numbers",
})


# Symbols that run a user's callable, which may read tensors that are not its arguments (a checkpointed module's
# parameters): differentiated through PyTorch's autograd even when no argument requires grad
_READS_PARAMETERS_INSIDE = frozenset({"torch.utils.checkpoint.checkpoint"})


def _walk(bsyms):
    for b in bsyms:
        yield b
        yield from _walk(b.subsymbols)


def _numbers_read_inside(b: BoundSymbol) -> list:
    """Numbers ``b``'s subsymbols read that none of them makes (an argument's symbolic size its checks compare): an
    island, compiled on its own, takes them as inputs."""
    made, read = set(), []
    for s in _walk(b.subsymbols):
        read.extend(p for p in s.flat_proxy_args if isinstance(p, NumberProxy) and p.name not in made)
        made.update(o.name for o in s.flat_proxy_outs)
    return read


def _decomposes(b: BoundSymbol) -> bool:
    """Whether ``b``'s subsymbols compute its tensor outputs. Subsymbols that only check arguments or compute sizes
    (``setitem`` with symbolic sizes) are no decomposition: differentiating them would lose the data path."""
    if not b.subsymbols:
        return False
    made = {o.name for s in _walk(b.subsymbols) for o in s.flat_proxy_outs}
    made |= {p.name for p in b.flat_proxy_args}
    return all(o.name in made for o in b.flat_proxy_outs if isinstance(o, TensorProxy))


def _reached_outputs(b: BoundSymbol, active) -> set[str]:
    """Names of ``b``'s differentiable outputs that its decomposition computes from the names in ``active``
    (data flow through symbols that carry gradients). An output its subsymbols do not compute (they only check
    arguments or compute sizes: ``b`` runs as one call) counts as reached."""
    outs = [o for o in b.flat_proxy_outs if _differentiable_dtype(o)]
    if not b.subsymbols:
        return {o.name for o in outs}
    reached = set(active)
    made = set()
    for s in b.subsymbols:
        made.update(o.name for o in s.flat_proxy_outs)
        if is_nondifferentiable(s.sym.id):
            continue
        read = {p.name for p in s.flat_proxy_args if isinstance(p, TensorProxy)} & reached
        if read:
            reached |= _reached_outputs(s, read)
    return {o.name for o in outs if o.name in reached or o.name not in made}


def _cheap(b: BoundSymbol) -> bool:
    for sub in _walk(b.subsymbols):
        if sub.subsymbols:
            continue
        tags = sub.sym.tags
        if "side_effect" in tags or "random" in tags:
            return False
        if not (sub.sym.is_prim and ("elementwise" in tags or sub.sym.id in _CHEAP_PRIMS)):
            return False
    return True


def _hoist_numbers(fw: TraceCtx, trace: TraceCtx, needed: list, defined: set) -> None:
    """Sizes computed inside a decomposition that the forward runs as one call (``ltorch.view``'s inferred
    dim, with symbolic values) but that backward reads: their definitions are added to the forward."""
    if not needed:
        return
    makers = {}
    for b in _walk(trace.bound_symbols):
        if b.sym.is_prim and not b.subsymbols:
            for o in b.flat_proxy_outs:
                if isinstance(o, NumberProxy):
                    makers.setdefault(o.name, b)

    hoisted: list = []

    def define(p) -> None:
        if p.name in defined:
            return
        maker = makers.get(p.name)
        if maker is None:
            raise AssertionError(f"internal error: backward reads the number {p.name}, defined nowhere in the forward")
        for a in maker.flat_proxy_args:
            if isinstance(a, NumberProxy):
                define(a)
        hoisted.append(maker)
        defined.update(o.name for o in maker.flat_proxy_outs)

    for p in needed:
        define(p)
    # before the first forward symbol that reads one of them (an argument of a later symbol, as expand's size)
    names = {o.name for b in hoisted for o in b.flat_proxy_outs}
    first = next((i for i, b in enumerate(fw.bound_symbols)
                  if any(a.name in names for s in (b, *_walk(b.subsymbols)) for a in s.flat_proxy_args)),
                 len(fw.bound_symbols))
    fw.bound_symbols[first:first] = hoisted


def _with_entry_versions(trace: TraceCtx, fails: dict) -> dict:
    """``fails`` (output name -> (message, input or None)) with each input replaced by its version read at the start of
    the forward (``prims.tensor_version``), which eager's message counts from."""
    by_name = {a.name: a for a in trace.args if isinstance(a, TensorProxy)}
    versions = {name: prims.tensor_version(by_name[name]) for name in {i for _, i in fails.values() if i in by_name}}
    return {out: (message, versions.get(i, 0)) for out, (message, i) in fails.items()}


def split_forward_backward(trace: TraceCtx, executors, fails_in_backward=None, hidden_outputs=()) -> ForwardBackward:
    """The forward and backward traces of ``trace`` (functional, before executor dispatch). ``fails_in_backward``:
    output name -> the error eager's backward raises on reaching the op that made it. ``hidden_outputs``: values of
    ``trace`` the forward also returns, after its outputs (with a cotangent where differentiable), which the output
    spec does not hold (the bases of returned views, frontend/autograd_function.py)."""
    import time

    start = time.perf_counter_ns()
    d = _Differentiator(trace, executors)
    with tracectx(d.fw):
        d.fails_in_backward = _with_entry_versions(trace, fails_in_backward or {})
        for bsym in trace.bound_symbols:
            d.visit(bsym)
    flat_out, spec = tree_flatten(trace.output)
    flat_out = [d.env.get(p.name, p) if isinstance(p, Proxy) else p for p in (*flat_out, *hidden_outputs)]
    bw, positions, differentiable_inputs = d.build_backward(flat_out)
    fw_defined = {a.name for a in trace.args} | {o.name for s in d.fw.bound_symbols for o in s.flat_proxy_outs}
    fw_defined |= {o.name for s in d.fw.bound_symbols for n in s.number_definitions() for o in n.flat_proxy_outs}
    # numbers the forward reads that a rule re-recorded under new names (chunk's size inside its decomposition),
    # and those backward reads
    read = [p for s in d.fw.bound_symbols for p in s.flat_proxy_args if isinstance(p, NumberProxy)]
    _hoist_numbers(d.fw, trace, [p for p in read + list(bw.args) if isinstance(p, NumberProxy) and
                                 p.name not in fw_defined], fw_defined)
    for p in bw.args[:len(bw.args) - len(positions)]:
        if p.name not in fw_defined:
            makers = [f"{b.sym.id} (inside {parent.sym.id})" for parent in trace.bound_symbols
                      for b in _walk(parent.subsymbols) if any(o.name == p.name for o in b.flat_proxy_outs)]
            raise AssertionError(f"internal error: backward reads {p.name}, which the forward trace does not define "
                                 f"at its top level (made by {', '.join(makers) or 'nothing'}); please file an issue")
    saved = order_saved(bw.args[:len(bw.args) - len(positions)])
    bw.args = saved + bw.args[len(bw.args) - len(positions):]
    d.fw.output = forward_output(flat_out, saved)
    seconds = (time.perf_counter_ns() - start) / 1e9
    d.fw.provenance = TraceProvenance("Forward of the autograd split (outputs, values saved for backward)", seconds)
    bw.provenance = TraceProvenance("Backward of the autograd split (gradients of the inputs that require grad)",
                                    seconds)
    return ForwardBackward(d.fw, bw, saved, spec, positions, differentiable_inputs)

