"""Common-subexpression elimination: a bound symbol equal to an earlier one (same symbol, same
arguments) reuses the earlier outputs. Random ops and ops with side effects are never merged. Each
sub-trace (a cond's branch, a loop's body) is cleaned on its own: nothing is merged across its boundary."""

from __future__ import annotations

from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.trace import TraceCtx, from_trace, timed_transform
from thunder.extend import swap_proxies

__all__ = ["cse"]


def _key(bsym, rename: dict, grad_enabled: bool):
    def freeze(x):
        if isinstance(x, Proxy):
            return ("proxy", rename.get(x.name, x).name)
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, tuple(freeze(v) for v in x))
        if isinstance(x, dict):
            return ("dict", tuple((k, freeze(v)) for k, v in x.items()))
        if isinstance(x, slice):
            return ("slice", freeze(x.start), freeze(x.stop), freeze(x.step))
        try:
            hash(x)
        except TypeError:
            return ("id", id(x))
        return (type(x).__name__, x)

    # the grad mode is part of the value: a tensor computed under no_grad is not one autograd records
    return (bsym.sym.id, freeze(bsym.args), freeze(bsym.kwargs), grad_enabled)


def _with_survivor_dims(outs, rename: dict) -> dict:
    """name -> a copy of each tensor in ``outs`` whose dims name a size merged away, naming the survivor instead.
    A copy, not the proxy changed in place: the proxy is shared with the trace cleaned, which may still be
    recorded (a value read mid-program cleans the trace so far) and does not define the survivor."""
    restated = {}
    for o in outs:
        if isinstance(o, TensorProxy) and any(isinstance(d, Proxy) and d.name in rename for d in o.shape):
            copy = o.replace(o.name, shape=tuple(rename.get(d.name, d) if isinstance(d, Proxy) else d for d in o.shape))
            copy.outside = o.outside  # a view a rebind made of a caller's tensor stays that tensor
            restated[o.name] = copy
    return restated


def cse(trace: TraceCtx, *, numbers_only: bool = False) -> TraceCtx:
    """``numbers_only``: merge only arithmetic on numbers (after dispatch, where executor symbols no longer
    carry the torch language's tags, e.g. "random")."""
    what = "Common subexpression elimination" + (" (numbers)" if numbers_only else "")
    with timed_transform(what) as done:
        seen: dict = {}
        rename: dict[str, Proxy] = {}
        kept = []
        # tensors the program hands out (returned, stored by the epilogue) keep their identity: two equal
        # computations there are two tensors, as in eager (merging would alias, e.g. two optimizer states)
        escaping = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, TensorProxy)}
        grad_enabled = trace.grad_enabled
        for bsym in trace.bound_symbols:
            if rename:
                bsym = swap_proxies(bsym, rename)
                restated = _with_survivor_dims(bsym.flat_proxy_outs, rename)
                if restated:
                    rename.update(restated)
                    bsym = swap_proxies(bsym, restated)
            bsym = bsym.map_subtraces(lambda t: cse(t, numbers_only=numbers_only))
            if bsym.sym.id == "prims.set_grad_enabled":
                grad_enabled = bool(bsym.args[0])
            if "cse_barrier" in bsym.sym.tags:
                seen.clear()  # values after it are not merged with values before (a segment boundary)
            outs = bsym.flat_proxy_outs
            if not outs and bsym.sym.name.startswith("check_") and "prologue" in bsym.sym.tags:
                # a prologue check asked twice (its operands merged above): once suffices, checks are pure
                key = _key(bsym, rename, grad_enabled)
                if key not in seen:
                    seen[key] = bsym
                    kept.append(bsym)
                continue
            if not outs or {"random", "side_effect"} & set(bsym.sym.tags) or any(o.name in escaping for o in outs) or (
                    numbers_only and not all(isinstance(o, NumberProxy) for o in outs)):
                kept.append(bsym)
                continue
            key = _key(bsym, rename, grad_enabled)
            earlier = seen.get(key)
            if earlier is None:
                seen[key] = bsym
                kept.append(bsym)
                continue
            for new, old in zip(bsym.flat_proxy_outs, earlier.flat_proxy_outs):
                rename[new.name] = old
                # the sizes its decomposition computed go with it: later ops read the survivor's (cat's s0 + s0)
                if isinstance(new, TensorProxy) and isinstance(old, TensorProxy):
                    for d_new, d_old in zip(new.shape, old.shape):
                        if isinstance(d_new, Proxy) and isinstance(d_old, Proxy) and d_new.name != d_old.name:
                            rename.setdefault(d_new.name, d_old)
        new = from_trace(trace)
        new.bound_symbols = kept
        if rename:
            leaves, spec = tree_flatten(trace.output)
            from thunder.core.pytree import tree_unflatten

            new.output = tree_unflatten([rename.get(x.name, x) if isinstance(x, Proxy) else x for x in leaves], spec)
        done(new)
    return new
