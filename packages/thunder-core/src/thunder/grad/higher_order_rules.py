"""Gradient rules of higher-order symbols, which carry sub-traces (see :mod:`thunder.core.symbol`).

``thunder.cond(pred, true_branch, false_branch, *operands)``: each branch is split into a forward and a
backward (:func:`thunder.transforms.autograd.split_forward_backward`). The forward is a ``cond`` over the
branches' forwards, each returning the outputs and the values *both* branches save: its own, and for the
other branch's, zeros expanded from one element (no memory) so both return the same structure. The
backward is a ``cond`` over the branches' backwards, on the same predicate, returning a gradient for every
operand either branch differentiates (zeros where the taken branch does not reach it, as eager's
``torch.cond`` gives).
"""

from __future__ import annotations

from thunder.core import prims
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.symbol import BoundSymbol
from thunder.core.trace import TraceCtx, from_trace, get_tracectx, tracectx
from thunder.grad.registry import register_grad

__all__ = []


def _executors():
    from thunder.extend import get_default_executors

    return get_default_executors()


def _zeros_like(p: TensorProxy) -> TensorProxy:
    """Zeros with ``p``'s metadata, expanded from a single element (an expand: no memory)."""
    zero = prims.full((), 0, device=p.device, dtype=p.dtype)
    return prims.broadcast_in_dim(zero, p.shape, ()) if p.shape else zero


def _pad(p):
    """What a branch returns in place of a value only the other branch saves."""
    if isinstance(p, TensorProxy):
        return _zeros_like(p)
    if isinstance(p, NumberProxy):
        return type(p.value)(0) if hasattr(p, "value") else 0
    return None


def _fresh(x, name=None):
    from thunder.frontend.higher_order import fresh_proxy

    return fresh_proxy(x, name)


def _copy(t: TraceCtx, name: str) -> TraceCtx:
    new = from_trace(t)
    new.fn_name = name
    new.bound_symbols.extend(t.bound_symbols)
    return new


def _cond_symbol():
    from thunder.frontend.higher_order import higher_order_symbol

    return higher_order_symbol("cond")


@register_grad("thunder.cond")
def _cond_grad(pred, true_branch, false_branch, *operands):
    from thunder.transforms.autograd import split_forward_backward

    outer = get_tracectx()
    branches = (true_branch, false_branch)
    splits = [split_forward_backward(b, _executors()) for b in branches]
    template = list(splits[0].forward.output[0])  # flat outputs (metadata as both branches have)
    n_out = len(template)
    names = [getattr(a, "name", None) for a in true_branch.args]  # both branches take the same parameters
    # saved values that are operands are passed to the backward as they are; the others come out of the cond
    computed = [[p for p in s.saved if p.name not in names] for s in splits]
    saved_operands = sorted({names.index(p.name) for s in splits for p in s.saved if p.name in names})

    # forward: outputs, then the computed saved values of each branch in turn (the other branch's padded)
    forwards = []
    for k, (b, s) in enumerate(zip(branches, splits)):
        fw = _copy(s.forward, outer.make_unique_name(f"{b.fn_name}_forward"))
        with tracectx(fw):
            saved = [v for j, cj in enumerate(computed) for v in (cj if j == k else [_pad(p) for p in cj])]
        fw.output = (*s.forward.output[0], *saved)
        forwards.append(fw)
    results = [_fresh(x) for x in (*template, *(p for c in computed for p in c))]
    outer.scopes[-1].append(BoundSymbol(_cond_symbol(), (pred, *forwards, *operands), {}, tuple(results), (),
                                        outer.current_location()))
    outputs, saved_outer = tuple(results[:n_out]), results[n_out:]
    proxy_positions = [i for i, x in enumerate(template) if isinstance(x, Proxy)]
    # operands some branch differentiates, or returns as it is (its gradient is then the cotangent itself)
    wanted = sorted({j for s in splits for j in s.differentiable_inputs} |
                    {names.index(x.name) for x in template if isinstance(x, TensorProxy) and x.name in names
                     and operands[names.index(x.name)].requires_grad})

    def backward(*cotangents):
        cots = {proxy_positions[i]: c for i, c in enumerate(cotangents) if c is not None}
        if not wanted or not cots:
            return (None,) * (3 + len(operands))
        bw_trace = get_tracectx()
        backwards = []
        for k, (b, s) in enumerate(zip(branches, splits)):
            bw = _copy(s.backward, bw_trace.make_unique_name(f"{b.fn_name}_backward"))
            own_cot_at = dict(zip(s.differentiable_outputs, s.backward.args[len(s.saved):]))
            with tracectx(bw):
                params = []
                for j, cj in enumerate(computed):
                    params += cj if j == k else [_placeholder(bw, p) for p in cj]
                params += [b.args[j] for j in saved_operands]
                cot_params = {i: own_cot_at[i] if i in own_cot_at else _placeholder(bw, c) for i, c in cots.items()}
                grads = dict(zip(s.differentiable_inputs, s.backward.output))
                for i, c in cot_params.items():  # an operand returned as it is: its cotangent flows to it
                    out = s.forward.output[0][i]
                    if isinstance(out, TensorProxy) and out.name in names:
                        j = names.index(out.name)
                        grads[j] = c if grads.get(j) is None else prims.add(grads[j], c)
                bw.output = tuple(grads[j] if grads.get(j) is not None else _zeros_like(operands[j]) for j in wanted)
            bw.args = [*params, *cot_params.values()]
            backwards.append(bw)
        grads_outer = [TensorProxy(shape=operands[j].shape, dtype=operands[j].dtype, device=operands[j].device)
                       for j in wanted]
        args = (pred, *backwards, *saved_outer, *(operands[j] for j in saved_operands), *cots.values())
        bw_trace.scopes[-1].append(BoundSymbol(_cond_symbol(), args, {}, tuple(grads_outer), (),
                                               bw_trace.current_location()))
        result = [None] * len(operands)
        for j, g in zip(wanted, grads_outer):
            result[j] = g
        return (None, None, None, *result)

    return outputs, backward


def _placeholder(trace: TraceCtx, like):
    """A parameter a branch's backward receives but does not read (a value only the other branch uses)."""
    return _fresh(like, trace.make_unique_name("unused")) if isinstance(like, Proxy) else Proxy(trace.make_unique_name("unused"))


def _inline(sub: TraceCtx, values: list):
    """Records ``sub``'s bound symbols in the current trace with its parameters bound to ``values``; returns its
    output. Its own values keep their names (unique: sub-traces draw names from the trace they were made in)."""
    from thunder.extend import swap_proxies

    mapping = {p.name: v for p, v in zip(sub.args, values) if isinstance(p, Proxy)}
    trace = get_tracectx()
    for b in sub.bound_symbols:
        trace.scopes[-1].append(swap_proxies(b, mapping) if mapping else b)
    return tuple(mapping.get(x.name, x) if isinstance(x, Proxy) else x for x in sub.output)


def autograd_function_grad(forward, backward, *args, outputs: int):
    """A ``torch.autograd.Function`` traced by thunder: the user's forward, then the user's backward (traced).
    ``forward`` returns the Function's ``outputs`` flat outputs, then what ``backward`` reads of its values."""
    outputs = _inline(forward, list(args))[:outputs]
    renamed = {p.name: a for p, a in zip(forward.args, args) if isinstance(p, Proxy)}
    n_saved = len(backward.args) - sum(isinstance(o, TensorProxy) for o in outputs)
    saved = [renamed.get(p.name, p) for p in backward.args[:n_saved]]

    def backprop(*cotangents):
        cots = [c if c is not None else _zeros_like(o) for o, c in zip(
            (o for o in outputs if isinstance(o, TensorProxy)), cotangents)]
        grads = _inline(backward, [*saved, *cots])
        n_inputs = len(backward.output)
        return (None, None, *grads, *(None,) * (len(args) - n_inputs))

    return outputs, backprop
