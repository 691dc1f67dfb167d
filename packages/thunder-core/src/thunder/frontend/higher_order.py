"""Higher-order operators whose callables the interpreter translates while tracing: ``torch.cond``.

A predicate known while tracing (a Python bool, a shape comparison, a number, which under symbolic values
becomes a constraint) selects the branch, which is interpreted inline. A tensor predicate makes each
branch a sub-trace of its own (transformed and dispatched like any computation), checks that they return
matching metadata as PyTorch requires, and records one call that runs the taken branch when the program
runs, so only that branch computes and autograd sees only it.
"""

from __future__ import annotations

from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.proxies import TensorProxy
from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.interpreter import WrappedValue, call_wrapped

__all__ = ["cond_lookaside"]


def cond_lookaside(pred_w: WrappedValue, true_fn_w, false_fn_w, operands_w=None, **kwargs):
    operands = () if operands_w is None else operands_w.value
    if not isinstance(operands, (tuple, list)):
        raise TypeError(f"torch.cond: operands must be a tuple or list, got {type(operands).__name__}")
    pred = pred_w.value
    if not isinstance(pred, TensorProxy):
        branch = true_fn_w if bool(pred) else false_fn_w  # a constraint under symbolic values
        return call_wrapped(branch, *operands)
    if pred.numel() != 1 or pred.dtype.kind != "bool":
        raise RuntimeError(f"torch.cond: expected the predicate to be a boolean tensor with one element, got "
                           f"{pred.type_string()}{user_location_suffix()}")
    from thunder.interpreter.wrapped import computed

    branches = [_trace_branch(w, operands, name) for w, name in ((true_fn_w, "true_branch"),
                                                                  (false_fn_w, "false_branch"))]
    t_leaves, t_spec = tree_flatten(branches[0].output)
    f_leaves, f_spec = tree_flatten(branches[1].output)
    if repr(t_spec) != repr(f_spec) or any(_meta(a) != _meta(b) for a, b in zip(t_leaves, f_leaves)):
        raise UnsupportedError(
            "torch.cond: the branches must return the same structure and tensor metadata (shape, dtype, device), "
            f"as PyTorch requires{user_location_suffix()}"
        )
    return computed(tree_unflatten(_record_cond(pred, operands, branches), t_spec))


def _free_proxies(trace) -> list:
    """Proxies a sub-trace reads that it neither receives nor computes (parameters, outer values)."""
    defined = {p.name for p in trace.args}
    free: dict = {}
    for b in trace.bound_symbols:
        for a in b.flat_proxy_args:
            if a.name not in defined:
                free.setdefault(a.name, a)
        defined.update(o.name for o in b.flat_proxy_outs)
    for o in tree_flatten(trace.output)[0]:
        if hasattr(o, "name") and o.name not in defined:
            free.setdefault(o.name, o)
    return list(free.values())


def _trace_branch(fn_w, operands, name: str = "branch"):
    """A branch as a sub-trace of its own, its operands as parameters (names shared with the outer trace)."""
    from thunder.core.trace import TraceCtx, get_tracectx, tracectx

    outer = get_tracectx()
    sub = TraceCtx(outer.make_unique_name(name))
    sub.names = outer.names  # one namespace: the branch may read the outer trace's values
    sub.location_fn, sub.tensor_resolver = outer.location_fn, outer.tensor_resolver
    with tracectx(sub):
        sub.output = call_wrapped(fn_w, *operands).value
    sub.args = [o for o in operands if hasattr(o, "name")]
    return sub


def close_subtraces(subtraces, exclude=()) -> list:
    """Makes sub-traces closed: every outer value one of them reads (a parameter, an earlier result) becomes a
    parameter of all of them, after their own. Returns those values, which the call passes."""
    free: dict = {}
    for t in subtraces:
        for p in _free_proxies(t):
            free.setdefault(p.name, p)
    free = [p for p in free.values() if not any(p is o for o in exclude)]
    for t in subtraces:
        t.args = list(t.args) + free
    return free


def cond(pred, true_fn, false_fn, *operands):
    """What ``thunder.cond`` runs: the taken branch's compiled sub-trace (a tuple of its flat outputs)."""
    return true_fn(*operands) if pred else false_fn(*operands)


_symbols: dict = {}


def higher_order_symbol(name: str, tags=()):
    """``thunder.<name>``: a symbol run by the torch executor as ``thunder.frontend.higher_order.<name>``, taking
    its sub-traces (compiled) among its arguments."""
    sym = _symbols.get(name)
    if sym is None:
        from thunder.core.symbol import Symbol
        from thunder.extend import get_executor

        torchex = get_executor("torch")
        sym = Symbol(name, None, id=f"thunder.{name}", is_prim=True, executor=torchex,
                     module="thunder.frontend.higher_order", alias="higher_order", tags=tags)
        torchex.register_implementation(sym, sym)
        _symbols[name] = sym
    return sym


def fresh_proxy(x, name=None):
    """A new proxy with ``x``'s metadata (an output of a higher-order call); other values as they are."""
    from thunder.core.proxies import NumberProxy, Proxy

    if isinstance(x, TensorProxy):
        return x.replace(name)
    if isinstance(x, NumberProxy):
        return type(x)(name, value=x.value, data_dependent=True)  # computed when the program runs
    if isinstance(x, Proxy):
        return type(x)(name)
    return x


_fresh = fresh_proxy


def _record_cond(pred, operands, branches):
    """One bound symbol ``thunder.cond(pred, true_branch, false_branch, *operands, *outer values)``."""
    from thunder.core.symbol import BoundSymbol
    from thunder.core.trace import get_tracectx

    for b in branches:
        leaves, _ = tree_flatten(b.output)
        b.output = tuple(leaves)
    free = close_subtraces(branches, exclude=operands)
    out_leaves, out_spec = tree_flatten(branches[0].output)
    out_leaves = [_fresh(x) for x in out_leaves]
    trace = get_tracectx()
    args = (pred, *branches, *[o for o in operands if hasattr(o, "name")], *free)
    trace.scopes[-1].append(BoundSymbol(higher_order_symbol("cond"), args, {}, tuple(out_leaves), (),
                                        trace.current_location()))
    return out_leaves


def _meta(x):
    if isinstance(x, TensorProxy):
        return (tuple(x.shape), x.dtype, x.device)
    return ("value", x)


# ---------------------------------------------------------------------------------------------
# torch.autograd.Function
# ---------------------------------------------------------------------------------------------


class _TracingCtx:
    """What a Function's forward may call on ``ctx`` while thunder learns its outputs' metadata."""

    def __init__(self, args):
        self.needs_input_grad = tuple(isinstance(a, TensorProxy) and a.requires_grad for a in args)
        self.saved_tensors = ()
        self.in_backward = False
        self.non_differentiable: set[str] = set()  # names of the outputs marked non-differentiable

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    @property
    def saved_variables(self):
        return self.saved_tensors

    def mark_dirty(self, *tensors):
        raise UnsupportedError("an autograd.Function that modifies its inputs in place (ctx.mark_dirty) is not "
                               f"supported by thunder.jit yet{user_location_suffix()}")

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable.update(t.name for t in tensors if isinstance(t, TensorProxy))

    def set_materialize_grads(self, value):
        pass


_function_symbols: dict = {}


def _uses_setup_context(cls) -> bool:
    """PyTorch's recommended form: ``forward(*args)`` without ctx, then ``setup_context(ctx, inputs, output)``."""
    import torch

    return getattr(cls.setup_context, "__func__", cls.setup_context) is not \
        torch.autograd.function._SingleLevelFunction.setup_context


def _run_forward(cls, ctx_w, wargs):
    """The user's forward (interpreted) as PyTorch calls it for either form; returns its wrapped output."""
    from thunder.interpreter.wrapped import computed

    if not _uses_setup_context(cls):
        return call_wrapped(computed(cls.forward), ctx_w, *wargs)
    out_w = call_wrapped(computed(cls.forward), *wargs)
    inputs_w = computed(tuple(w.value for w in wargs), items=tuple(wargs))
    call_wrapped(computed(cls.setup_context), ctx_w, inputs_w, out_w)
    return out_w


def _traceable_backward(cls):
    """The user's backward, under ``@once_differentiable`` if so decorated: that wrapper only runs it without grad
    and marks its results for PyTorch's autograd (its C helper cannot take proxies); thunder's backward trace is
    not differentiated again anyway."""
    import torch.autograd.function as function

    backward = cls.backward
    if getattr(backward, "__code__", None) is _once_differentiable_code(function) and hasattr(backward, "__wrapped__"):
        return backward.__wrapped__
    return backward


def _once_differentiable_code(function):
    return function.once_differentiable(lambda ctx: None).__code__


def _bind_defaults(forward, wargs, wkwargs) -> list:
    """As PyTorch's ``Function.apply`` does for the setup_context form: keyword arguments made positional and
    defaults filled in, so ``forward`` and ``setup_context``'s ``inputs`` see every parameter."""
    import inspect

    from thunder.interpreter.wrapped import computed

    bound = inspect.signature(forward).bind(*[w.value for w in wargs], **{k: w.value for k, w in wkwargs.items()})
    bound.apply_defaults()
    names = list(bound.signature.parameters)
    out = []
    for i, value in enumerate(bound.args):
        if i < len(wargs):
            out.append(wargs[i])
        elif i < len(names) and names[i] in wkwargs:
            out.append(wkwargs[names[i]])
        else:
            out.append(computed(value))  # a default
    return out


def _forward_natively(cls, ctx, args, kwargs):
    if not _uses_setup_context(cls):
        return cls.forward(ctx, *args, **kwargs)
    outputs = cls.forward(*args, **kwargs)
    cls.setup_context(ctx, tuple(args), outputs)
    return outputs


def autograd_function_lookaside(cls):
    """``MyFunction.apply(*args)``: the user's forward is traced into the computation (its ops inlined when the
    program runs) and the user's backward is traced into a sub-trace that thunder's autograd runs for the
    gradients (``ctx.save_for_backward``, attributes set on ``ctx`` and ``ctx.needs_input_grad`` as written).
    When the backward cannot be traced, the call runs as one call of the user's Function under PyTorch's
    autograd instead, with a warning saying why."""

    def apply(*wargs, **wkwargs):
        from thunder.frontend.autocast import refuse_under_autocast
        from thunder.interpreter.wrapped import computed

        refuse_under_autocast(f"{cls.__name__}.apply (a torch.autograd.Function)")
        if _uses_setup_context(cls):
            wargs, wkwargs = _bind_defaults(cls.forward, wargs, wkwargs), {}
        if not wkwargs:
            traced = _traced_function(cls, wargs)
            if traced is not None:
                return computed(traced)
        return computed(_function_as_one_call(cls, wargs, wkwargs))

    return apply


class FunctionBackwardNotTraced(UserWarning):
    """A torch.autograd.Function's backward could not be traced: the call runs under PyTorch's autograd."""


def _traced_function(cls, wargs):
    """The forward's sub-trace and the backward's, recorded as one ``cls.apply`` bound symbol; None (after a
    warning) when the backward cannot be traced."""
    import warnings

    from thunder.core.symbol import BoundSymbol
    from thunder.core.trace import TraceCtx, get_tracectx, tracectx
    from thunder.interpreter.wrapped import computed

    outer = get_tracectx()
    args = [w.value for w in wargs]
    ctx = _TracingCtx(args)

    def sub_trace(name):
        t = TraceCtx(outer.make_unique_name(name))
        t.names = outer.names
        t.location_fn, t.tensor_resolver = outer.location_fn, outer.tensor_resolver
        return t

    forward = sub_trace(f"{cls.__name__}_forward")
    with tracectx(forward):
        outputs = _run_forward(cls, computed(ctx), wargs).value
    out_leaves, out_spec = tree_flatten(outputs)
    forward.output = tuple(out_leaves)
    forward.args = [a for a in args if isinstance(a, TensorProxy)]
    backward = sub_trace(f"{cls.__name__}_backward")
    grads = [x.replace() if isinstance(x, TensorProxy) else None for x in out_leaves]
    try:
        with tracectx(backward):
            ctx.in_backward = True
            result = call_wrapped(computed(_traceable_backward(cls)), computed(ctx),
                                  *[computed(g) for g in grads]).value
        result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if len(result) != len(args):
            raise TypeError(f"backward returned {len(result)} gradients, forward takes {len(args)} arguments")
    except Exception as e:  # noqa: BLE001  anything the interpreter cannot follow: PyTorch runs the Function
        warnings.warn(f"{cls.__qualname__}.backward could not be traced ({type(e).__name__}: {e}); the call runs as "
                      "one call of the Function under PyTorch's autograd", FunctionBackwardNotTraced, stacklevel=2)
        return None
    backward.output = tuple(g for a, g in zip(args, result) if isinstance(a, TensorProxy))
    backward.args = [g for g in grads if g is not None]
    close_subtraces([forward])
    free_bw = _free_proxies(backward)
    backward.args = free_bw + backward.args
    # what the backward reads of the forward's values (saved tensors, tensors kept on ctx) is returned by the
    # forward's sub-trace too, after the outputs
    made = {o.name for b in forward.bound_symbols for o in b.flat_proxy_outs}
    forward.output = (*out_leaves, *(p for p in free_bw if p.name in made))
    sym = _function_symbol(cls, traced=True)
    outer.scopes[-1].append(BoundSymbol(sym, (forward, backward, *forward.args), {"outputs": len(out_leaves)},
                                        tuple(out_leaves), tuple(forward.bound_symbols), outer.current_location()))
    # outputs marked non-differentiable do not require grad, as in eager (their backward gets zero cotangents)
    detach = _ltorch("detach")
    return tree_unflatten([detach(o) if isinstance(o, TensorProxy) and o.name in ctx.non_differentiable else o
                           for o in out_leaves], out_spec)


def _function_as_one_call(cls, wargs, wkwargs):
    """The Function as one opaque call (PyTorch's autograd runs the user's backward); its forward is traced once,
    in a discarded scope, only for the outputs' metadata."""
    from thunder.core.symbol import BoundSymbol
    from thunder.core.trace import get_tracectx

    args = [w.value for w in wargs]
    kwargs = {k: w.value for k, w in wkwargs.items()}
    trace = get_tracectx()
    trace.push_scope()
    try:
        outputs = _forward_natively(cls, _TracingCtx(args), args, kwargs)
    finally:
        trace.pop_scope()
    # recorded with the traced outputs: the call itself computes them when the program runs
    trace.scopes[-1].append(BoundSymbol(_function_symbol(cls), tuple(args), kwargs, outputs, (),
                                        trace.current_location()))
    return outputs


def _function_symbol(cls, traced: bool = False):
    if traced:  # forward inlined (its subsymbols), backward a sub-trace run by the grad rule
        sym = _function_symbols.get((cls, "traced"))
        if sym is None:
            from thunder.core.symbol import Symbol
            from thunder.grad.higher_order_rules import autograd_function_grad
            from thunder.grad.registry import grad_rules

            sym = Symbol(f"{cls.__name__}_apply", None, id=f"thunder.autograd_function.{cls.__module__}.{cls.__qualname__}")
            grad_rules[sym.id] = autograd_function_grad
            _function_symbols[(cls, "traced")] = sym
        return sym
    sym = _function_symbols.get(cls)
    if sym is None:
        from thunder.core.symbol import Symbol
        from thunder.extend import get_executor

        torchex = get_executor("torch")
        name = f"{cls.__name__}_apply"

        sym = Symbol(name, None, id=f"torch.autograd_function.{cls.__module__}.{cls.__qualname__}", is_prim=True,
                     executor=torchex, call_ctx={name: cls.apply})
        torchex.register_implementation(sym, sym)
        _function_symbols[cls] = sym
    return sym


# ---------------------------------------------------------------------------------------------
# Activation checkpointing
# ---------------------------------------------------------------------------------------------


def checkpoint_lookaside(fn_w, *args_w, _trace_with=None, **kwargs_w):
    """``torch.utils.checkpoint.checkpoint(fn, *args)`` runs as PyTorch's checkpoint of ``fn`` when the
    program runs, so backward recomputes ``fn`` instead of keeping its activations. ``fn`` is traced
    once (through the interpreter, so what it reads is checked) only to learn the outputs' metadata."""
    from thunder.core.symbol import BoundSymbol
    from thunder.core.trace import get_tracectx
    from thunder.frontend.autocast import refuse_under_autocast
    from thunder.interpreter.wrapped import computed

    refuse_under_autocast("torch.utils.checkpoint.checkpoint")
    options = {k: w.value for k, w in kwargs_w.items() if k in _CHECKPOINT_OPTIONS}
    options.setdefault("use_reentrant", False)
    fn_kwargs_w = {k: w for k, w in kwargs_w.items() if k not in _CHECKPOINT_OPTIONS}  # fn's own (non-reentrant)
    if not options["use_reentrant"]:
        # fn = partial(f, *a, **k) (transformers 4.x's layers): its tensors are the checkpoint's arguments, not
        # constants of the recorded call; the non-reentrant checkpoint hands keywords on to f
        fn_w, args_w, fn_kwargs_w = _unfolded_partial(fn_w, list(args_w), fn_kwargs_w)
    trace = get_tracectx()
    trace.push_scope()
    try:
        # _trace_with: how to trace fn without coming back here (a module chosen by jit(checkpoint=...))
        outputs = (call_wrapped(fn_w, *args_w, **fn_kwargs_w) if _trace_with is None else _trace_with()).value
    finally:
        trace.pop_scope()
    kwargs = {**{k: w.value for k, w in fn_kwargs_w.items()}, **options}
    trace.scopes[-1].append(BoundSymbol(_checkpoint_symbol(), (fn_w.value, *[w.value for w in args_w]), kwargs,
                                        outputs, (), trace.current_location()))
    return computed(outputs)


# torch.utils.checkpoint.checkpoint's own keywords; the others go to the checkpointed function
_CHECKPOINT_OPTIONS = frozenset({"use_reentrant", "context_fn", "determinism_check", "debug", "early_stop",
                                 "preserve_rng_state"})


def _unfolded_partial(fn_w, args_w: list, kwargs_w: dict):
    import functools

    from thunder.interpreter.derivation import derive_attr, derive_item
    from thunder.interpreter.runtime import current_runtime

    rt = current_runtime()
    while type(fn_w.value) is functools.partial:
        p = fn_w.value
        wpargs, wpkw = derive_attr(rt, fn_w, "args", p.args), derive_attr(rt, fn_w, "keywords", p.keywords)
        args_w = [*(derive_item(rt, wpargs, i, v) for i, v in enumerate(p.args)), *args_w]
        kwargs_w = {**{k: derive_item(rt, wpkw, k, v) for k, v in p.keywords.items()}, **kwargs_w}
        fn_w = derive_attr(rt, fn_w, "func", p.func)
    return fn_w, args_w, kwargs_w


_checkpoint = []


def _checkpoint_symbol():
    if not _checkpoint:
        from thunder.core.symbol import Symbol
        from thunder.extend import get_executor

        torchex = get_executor("torch")
        sym = Symbol("checkpoint", None, id="torch.utils.checkpoint.checkpoint", is_prim=True, executor=torchex,
                     module="torch.utils.checkpoint", tags=("side_effect",))
        torchex.register_implementation(sym, sym)
        _checkpoint.append(sym)
    return _checkpoint[0]


# ---------------------------------------------------------------------------------------------
# Loops: map, scan and associative_scan unrolled over their (static) length; while_loop as one call
# ---------------------------------------------------------------------------------------------


def _ltorch(name):
    from thunder.torch.registry import language_symbols

    return language_symbols[name]


def _slices(tree, dim, i):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_ltorch("select")(x, dim, i) for x in leaves], spec)


def _stack(trees, dim):
    flat = [tree_flatten(t) for t in trees]
    spec = flat[0][1]
    return tree_unflatten([_ltorch("stack")([f[0][k] for f in flat], dim) for k in range(len(flat[0][0]))], spec)


def _length(tree, dim, op: str) -> int:
    leaves, _ = tree_flatten(tree)
    if not leaves or not all(isinstance(x, TensorProxy) for x in leaves):
        raise UnsupportedError(f"{op}: the inputs to loop over must be tensors{user_location_suffix()}")
    lengths = {int(x.shape[dim]) for x in leaves}  # a symbolic length becomes a constraint
    if len(lengths) != 1:
        raise UnsupportedError(f"{op}: the inputs to loop over must have the same length along dim {dim}"
                               f"{user_location_suffix()}")
    return lengths.pop()


# Loops of more than UNROLL_LIMIT iterations run as a Python loop over the body's sub-trace (traced once);
# shorter ones are unrolled through the interpreter, which lets every transform and fusion see across
# iterations at no cost in compile time worth the name.
UNROLL_LIMIT = 8


def _body_trace(fn_w, params, name):
    """``fn`` traced once on ``params`` (fresh proxies) as a closed sub-trace; its flat output is a tuple."""
    from thunder.core.trace import TraceCtx, get_tracectx, tracectx
    from thunder.interpreter.wrapped import computed

    outer = get_tracectx()
    sub = TraceCtx(outer.make_unique_name(name))
    sub.names = outer.names
    sub.location_fn, sub.tensor_resolver = outer.location_fn, outer.tensor_resolver
    with tracectx(sub):
        values = [tree_unflatten([fresh_proxy(x) for x in tree_flatten(p)[0]], tree_flatten(p)[1]) for p in params]
        out = call_wrapped(fn_w, *[computed(v) for v in values]).value
    sub.args = [x for v in values for x in tree_flatten(v)[0] if hasattr(x, "name")]
    return sub, out


def _check_tensors(what: str, tree) -> None:
    leaves, _ = tree_flatten(tree)
    if not all(isinstance(x, TensorProxy) for x in leaves):
        kinds = ", ".join(sorted({type(x).__name__ for x in leaves if not isinstance(x, TensorProxy)}))
        raise UnsupportedError(f"{what} must be tensors (got {kinds}){user_location_suffix()}")


def _same_metadata(what: str, got, expected) -> None:
    g, gs = tree_flatten(got)
    e, es = tree_flatten(expected)
    if repr(gs) != repr(es) or any(_meta(a) != _meta(b) for a, b in zip(g, e)):
        raise UnsupportedError(f"{what} must keep the structure and tensor metadata (shape, dtype, device) of its "
                               f"input, as PyTorch requires{user_location_suffix()}")


def scan(body, init, xs, consts, dim=0, reverse=False):
    """What ``thunder.scan`` runs: ``body(*carry, *slices of xs, *consts) -> (*carry, *ys)``, the ys stacked."""
    import torch

    carry, n_carry = tuple(init), len(init)
    n = xs[0].shape[dim]
    ys = []
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        out = body(*carry, *(x.select(dim, i) for x in xs), *consts)
        carry = out[:n_carry]
        ys.append(out[n_carry:])
    if reverse:
        ys.reverse()
    n_y = len(ys[0]) if ys else 0
    return (*carry, *(torch.stack([y[k] for y in ys], dim) for k in range(n_y)))


def _record_scan(body, init_leaves, xs_leaves, ys_leaves, dim, reverse):
    """One ``thunder.scan`` bound symbol; returns (carry outputs, stacked ys)."""
    from thunder.core.symbol import BoundSymbol
    from thunder.core.trace import get_tracectx

    consts = close_subtraces([body])
    n = xs_leaves[0].shape[dim]
    carry_out = [fresh_proxy(x) for x in init_leaves]
    ys_out = []
    for y in ys_leaves:
        shape = list(y.shape)
        shape.insert(dim % (len(shape) + 1), n)
        ys_out.append(y.replace(shape=tuple(shape)))
    trace = get_tracectx()
    trace.scopes[-1].append(BoundSymbol(higher_order_symbol("scan"), (body, tuple(init_leaves), tuple(xs_leaves),
                                                                      tuple(consts)),
                                        {"dim": dim, "reverse": reverse}, (*carry_out, *ys_out), (),
                                        trace.current_location()))
    return carry_out, ys_out


def map_lookaside(f_w, xs_w, *args_w):
    """torch._higher_order_ops.map(f, xs, *args): f on each slice of xs along dim 0, stacked."""
    from thunder.interpreter.wrapped import computed

    xs = xs_w.value
    n = _length(xs, 0, "map")
    if n <= UNROLL_LIMIT:
        outs = [call_wrapped(f_w, computed(_slices(xs, 0, i)), *args_w).value for i in range(n)]
        return computed(_stack(outs, 0))
    xs_leaves, xs_spec = tree_flatten(xs)
    x0 = tree_unflatten([x.replace(shape=tuple(x.shape[1:])) for x in xs_leaves], xs_spec)
    body, out = _map_body(f_w, x0, [w.value for w in args_w])
    _check_tensors("map: the function's outputs", out)
    out_leaves, out_spec = tree_flatten(out)
    body.output = tuple(out_leaves)
    _, ys = _record_scan(body, [], xs_leaves, out_leaves, 0, False)
    return computed(tree_unflatten(ys, out_spec))


def _map_body(f_w, x0, args):
    """map's body: the slice is a parameter; the extra arguments are outer values the body reads."""
    from thunder.core.trace import TraceCtx, get_tracectx, tracectx
    from thunder.interpreter.wrapped import computed

    outer = get_tracectx()
    sub = TraceCtx(outer.make_unique_name("map_body"))
    sub.names = outer.names
    sub.location_fn, sub.tensor_resolver = outer.location_fn, outer.tensor_resolver
    with tracectx(sub):
        leaves, spec = tree_flatten(x0)
        x = tree_unflatten([fresh_proxy(v) for v in leaves], spec)
        out = call_wrapped(f_w, computed(x), *[computed(a) for a in args]).value
    sub.args = list(tree_flatten(x)[0])
    return sub, out


def scan_lookaside(combine_w, init_w, xs_w, dim=0, reverse=False):
    """torch._higher_order_ops.scan: carry through the slices of xs; returns (carry, stacked ys)."""
    from thunder.interpreter.wrapped import computed

    dim, reverse = getattr(dim, "value", dim), getattr(reverse, "value", reverse)
    xs, carry = xs_w.value, init_w
    n = _length(xs, dim, "scan")
    if n > UNROLL_LIMIT:
        init = init_w.value
        _check_tensors("scan: the initial carry", init)
        xs_leaves, xs_spec = tree_flatten(xs)
        x0 = tree_unflatten([x.replace(shape=tuple(s for k, s in enumerate(x.shape) if k != dim % x.ndim))
                             for x in xs_leaves], xs_spec)
        body, out = _body_trace(combine_w, [init, x0], "scan_body")
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise UnsupportedError(f"scan: the combine function must return (next carry, output){user_location_suffix()}")
        _same_metadata("scan: the carry the combine function returns", out[0], init)
        _check_tensors("scan: the combine function's outputs", out[1])
        y_leaves, y_spec = tree_flatten(out[1])
        body.output = (*tree_flatten(out[0])[0], *y_leaves)
        carry_out, ys = _record_scan(body, tree_flatten(init)[0], xs_leaves, y_leaves, dim, reverse)
        return computed((tree_unflatten(carry_out, tree_flatten(init)[1]), tree_unflatten(ys, y_spec)))
    order = range(n)
    ys = []
    for i in (reversed(order) if reverse else order):
        carry_value, y = call_wrapped(combine_w, carry, computed(_slices(xs, dim, i))).value
        carry = computed(carry_value)
        ys.append(y)
    if reverse:
        ys.reverse()
    return computed((carry.value, _stack(ys, dim)))


def associative_scan_lookaside(combine_w, xs_w, dim, reverse=False, combine_mode=None):
    """torch._higher_order_ops.associative_scan: an inclusive scan, evaluated left to right (always unrolled:
    a combine function may be evaluated in any association order, which a tree or a loop would change)."""
    from thunder.interpreter.wrapped import computed

    dim, reverse = getattr(dim, "value", dim), getattr(reverse, "value", reverse)
    xs = xs_w.value
    order = list(range(_length(xs, dim, "associative_scan")))
    if reverse:
        order.reverse()
    acc, outs = None, {}
    for i in order:
        x_i = _slices(xs, dim, i)
        acc = x_i if acc is None else call_wrapped(combine_w, computed(acc), computed(x_i)).value
        outs[i] = acc
    return computed(_stack([outs[i] for i in range(len(order))], dim))


def while_loop(cond_fn, body_fn, carried, consts):
    """What ``thunder.while_loop`` runs: the body's sub-trace while the cond's returns true."""
    carried = tuple(carried)
    while cond_fn(*carried, *consts)[0]:
        carried = tuple(body_fn(*carried, *consts))
    return carried


def while_loop_lookaside(cond_w, body_w, carried_w):
    """torch._higher_order_ops.while_loop: its cond and body are sub-traces (traced once each) run by a Python loop
    when the program runs (the number of iterations depends on the data); the carried values keep their
    metadata, as PyTorch requires. Forward only, as PyTorch."""
    from thunder.core.symbol import BoundSymbol
    from thunder.core.trace import get_tracectx
    from thunder.interpreter.wrapped import computed

    carried = carried_w.value
    if not isinstance(carried, (tuple, list)):
        raise UnsupportedError(f"while_loop: the carried values must be a tuple or list{user_location_suffix()}")
    _check_tensors("while_loop: the carried values", carried)
    cond, pred = _body_trace(cond_w, list(carried), "while_cond")
    if not (isinstance(pred, TensorProxy) and pred.numel() == 1 and pred.dtype.kind == "bool"):
        raise UnsupportedError("while_loop: the cond function must return a boolean tensor with one element"
                               f"{user_location_suffix()}")
    cond.output = (pred,)
    body, new = _body_trace(body_w, list(carried), "while_body")
    _same_metadata("while_loop: the body's result", tuple(new), tuple(carried))
    body.output = tuple(tree_flatten(tuple(new))[0])
    consts = close_subtraces([cond, body])
    leaves, spec = tree_flatten(carried)
    outputs = [fresh_proxy(x) for x in leaves]
    trace = get_tracectx()
    trace.scopes[-1].append(BoundSymbol(higher_order_symbol("while_loop", tags=("side_effect",)),
                                        (cond, body, tuple(leaves), tuple(consts)), {}, tuple(outputs), (),
                                        trace.current_location()))
    return computed(tree_unflatten(outputs, spec))
