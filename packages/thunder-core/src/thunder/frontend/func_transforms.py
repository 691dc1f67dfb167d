"""``torch.func`` transforms inside a jitted function.

``torch.func.vmap`` / ``torch.vmap``: the function mapped over the batch dimension by thunder itself.

vmap's meaning is a map: ``vmap(f)(x)[i] == f(x[i])`` for a function without random draws or writes to its
inputs. functorch computes it with batched tensors whose machinery (C++ dispatch keys, global locks)
a trace cannot follow, so thunder computes the map instead: each batched input is sliced along its
``in_dim``, ``f`` is traced on the slices (unrolled for a short batch, otherwise one body sub-trace run
in a loop, as ``torch._higher_order_ops.map``) and the outputs are stacked along ``out_dims``. Slicing
and stacking are ordinary ops, so gradients flow through them like through any other.

PyTorch's own argument checks run (interpreted), so a wrong ``in_dims`` raises eager's error. Random
draws inside are eager's RuntimeError under ``randomness="error"`` and refused otherwise (they would not
draw eager's numbers); ``out_dims=None`` for an output computed from a batched input is eager's
ValueError.

The others (``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``, ``linearize``) are
refused where they enter functorch's machinery, naming the user's line.
"""

from __future__ import annotations

from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.trace import get_tracectx
from thunder.frontend.higher_order import UNROLL_LIMIT, _check_tensors, _ltorch, _record_scan, fresh_proxy
from thunder.interpreter import call_wrapped

__all__ = ["vmap_impl_lookaside", "refused_transform"]


def vmap_impl_lookaside(func_w, in_dims_w, out_dims_w, randomness_w, chunk_size_w, *args_w, **kwargs_w):
    """``torch._functorch.vmap.vmap_impl``, which ``vmap(f, ...)(*args, **kwargs)`` calls (whether the vmapped
    function was made inside the jitted function or outside)."""
    from torch._functorch import vmap as functorch_vmap
    from torch.utils._pytree import tree_flatten

    from thunder.interpreter.wrapped import computed

    call_wrapped(functorch_vmap._check_out_dims_is_int_or_int_pytree, out_dims_w, func_w)
    args_tuple = computed(tuple(w.value for w in args_w), items=tuple(args_w))
    batch_size, flat_in_dims, _, _ = call_wrapped(functorch_vmap._process_batched_inputs, in_dims_w, args_tuple,
                                                  func_w).value
    # the batched tensors, batch dimension first, and how to rebuild each argument from a slice of them
    batched, rebuild = [], []
    offset = 0
    for w in args_w:
        leaves, spec = tree_flatten(w.value)
        dims = flat_in_dims[offset:offset + len(leaves)]
        offset += len(leaves)
        if all(d is None for d in dims):
            rebuild.append(w)  # unbatched: passed as it is, keeping its provenance
            continue
        slots = []
        for leaf, d in zip(leaves, dims):
            if d is None:
                slots.append(leaf)
            else:
                slots.append(len(batched))
                batched.append(_ltorch("movedim")(leaf, d, 0) if d != 0 else leaf)
        rebuild.append((slots, dims, spec))

    def example(slices):
        from torch.utils._pytree import tree_unflatten

        args = [r if not isinstance(r, tuple) else computed(tree_unflatten(
            [slices[s] if d is not None else s for s, d in zip(r[0], r[1])], r[2])) for r in rebuild]
        return call_wrapped(func_w, *args, **kwargs_w).value

    n = int(batch_size)  # under symbolic values, a constraint: the loop's length is fixed by the trace
    randomness = randomness_w.value
    if n <= UNROLL_LIMIT:
        trace = get_tracectx()
        start = len(trace.scopes[-1])
        slices = [[_ltorch("select")(x, 0, i) for x in batched] for i in range(n)]
        # each sample traced apart at the top level, where a value read from its data would split the program:
        # eager's vmap refuses such reads, and so does the reader
        reader = getattr(trace, "value_reader", None)
        if reader is not None:
            reader.vmapped += 1
        try:
            outputs = [example(s) for s in slices]
        finally:
            if reader is not None:
                reader.vmapped -= 1
        _check_body(trace.scopes[-1][start:], randomness, func_w.value)
        recorded = trace.scopes[-1][start:]
        sources = {x.name for s in slices for x in s}
        return computed(_stack_outputs(outputs, out_dims_w.value, func_w.value,
                                       lambda out: _depends_on(recorded, sources, out)))
    return computed(_looped(example, batched, out_dims_w.value, func_w.value, randomness))


def _looped(example, batched, out_dims, func, randomness):
    """A long batch: ``example`` traced once on slice-shaped parameters, run in a loop (``thunder.scan``)."""
    from torch.utils._pytree import tree_flatten, tree_unflatten

    from thunder.core.trace import TraceCtx, tracectx

    outer = get_tracectx()
    body = TraceCtx(outer.make_unique_name("vmap_body"))
    body.names = outer.names
    body.location_fn, body.tensor_resolver = outer.location_fn, outer.tensor_resolver
    with tracectx(body):
        params = [fresh_proxy(x.replace(shape=tuple(x.shape[1:]))) for x in batched]
        out = example(params)
    body.args = params
    _check_body(body.bound_symbols, randomness, func)
    leaves, spec = tree_flatten(out)
    flat_dims = _flat_out_dims(out, leaves, spec, out_dims, func)
    if any(d is None for d in flat_dims):
        raise UnsupportedError(f"vmap: out_dims=None over a batch of more than {UNROLL_LIMIT} is not supported by "
                               f"thunder.jit{_caller_suffix()}; return the unbatched value from outside the "
                               "vmapped function")
    _check_tensors(f"vmap: the outputs of {_name(func)}", out)
    body.output = tuple(leaves)
    _, ys = _record_scan(body, [], batched, leaves, 0, False)
    movedim = _ltorch("movedim")
    return tree_unflatten([movedim(y, 0, d) if d != 0 else y for y, d in zip(ys, flat_dims)], spec)


def _stack_outputs(outputs, out_dims, func, is_batched):
    from torch.utils._pytree import tree_flatten, tree_unflatten

    flat = [tree_flatten(o) for o in outputs]
    leaves0, spec = flat[0]
    flat_dims = _flat_out_dims(outputs[0], leaves0, spec, out_dims, func)
    stack = _ltorch("stack")
    result = []
    for k, d in enumerate(flat_dims):
        column = [f[0][k] for f in flat]
        if d is None:
            if isinstance(column[0], TensorProxy) and any(is_batched(x) for x in column):
                name = _name(func)
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            result.append(column[0])
        elif not isinstance(column[0], TensorProxy):
            name = _name(func)
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(column[0])}. "
                             "Did you mean to set out_dims= to None for output?")
        else:
            result.append(stack(column, d))
    return tree_unflatten(result, spec)


def _flat_out_dims(out, leaves, spec, out_dims, func) -> list:
    """One out_dim per output leaf, with eager's error when ``out_dims`` does not fit the outputs."""
    from torch.utils._pytree import _broadcast_to_and_flatten, tree_flatten

    if isinstance(out, TensorProxy):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        flat = None
    else:
        flat = _broadcast_to_and_flatten(out_dims, spec)
    if flat is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                         f"has structure {spec}.")
    return flat


def _check_body(bsyms, randomness, func) -> None:
    """What eager's vmap refuses inside the function: a tensor's value (``.item()``), random draws."""
    if any(_uses(b, lambda s: s.name == "item") for b in bsyms):
        raise RuntimeError("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
                           ".item() on a Tensor, please try to rewrite what you're doing with other operations. If error "
                           "is occurring somewhere inside PyTorch internals, please file a bug report.")
    if not any(_uses(b, lambda s: "random" in s.tags) for b in bsyms):
        return
    if randomness == "error":
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out of "
                           "vmap")
    raise UnsupportedError(f"vmap({_name(func)}, randomness={randomness!r}) with random draws inside is not supported "
                           f"by thunder.jit{_caller_suffix()}: the draws would not be eager's; draw the random "
                           "values outside the vmapped function and pass them in (batched)")


def _uses(bsym, test) -> bool:
    return test(bsym.sym) or any(_uses(b, test) for b in bsym.subsymbols)


def _depends_on(bsyms, sources: set, target) -> bool:
    """Whether ``target`` is computed (through ``bsyms``) from a proxy named in ``sources``."""
    if not isinstance(target, Proxy):
        return False
    reached = set(sources)
    for b in bsyms:
        if any(a.name in reached for a in b.flat_proxy_args):
            reached.update(o.name for o in b.flat_proxy_outs)
    return target.name in reached


def _caller_suffix() -> str:
    """' (at file:line: source)' of the user's call of the transformed function (the trace's user location: the
    innermost frame outside installed packages and the standard library)."""
    from thunder.core.trace import get_tracectx

    trace = get_tracectx()
    loc = trace.user_location() if trace is not None else None
    return f" (at {loc})" if loc is not None else user_location_suffix()


def _name(func) -> str:
    from torch._functorch.vmap import _get_name

    return _get_name(func)


def func_transform_entries() -> dict:
    """Entries of the other torch.func transforms -> their names, refused before functorch changes its (global)
    state: the context managers grad and vjp (and the Jacobians' results) enter, and the transforms that
    inspect their inputs first (jacrev, jacfwd, hessian, linearize, functionalize) when called inside."""
    import torch.func
    from torch._functorch import eager_transforms

    entries = {}
    for name, what in (("grad_increment_nesting", "grad, grad_and_value, vjp, jacrev or hessian"),
                       ("jvp_increment_nesting", "jvp, jacfwd, linearize or hessian")):
        manager = getattr(eager_transforms, name, None)
        if hasattr(manager, "__wrapped__"):
            entries[manager.__wrapped__] = what
    for name in ("jacrev", "jacfwd", "hessian", "linearize", "functionalize"):
        fn = getattr(torch.func, name, None)
        while hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        if fn is not None:
            entries[fn] = name
    return entries


def refused_transform(what: str):
    def refuse(*args, **kwargs):
        raise UnsupportedError(
            f"torch.func.{what} inside a jitted function is not supported by thunder.jit{_caller_suffix()} (vmap "
            "is): for gradients call .backward() or torch.autograd.grad on the jitted function's outputs, or apply "
            "the transform outside the jitted function")

    return refuse
