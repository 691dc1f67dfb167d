"""Values read from tensors the program computes from constants alone.

A tensor made only from numbers the trace holds as constants (``torch.arange(0, 128)`` for a static length, and
what is computed from it without any input, random draw or in-place update) has the same value on every call the
cache entry serves: reading it needs no split and no check at run time (frontend/value_reads.py), the value read
while tracing is the value. transformers' packed-sequence test reads such a tensor (position ids made by
``arange``): read like this, the model takes eager's path (SDPA with ``is_causal`` and ``enable_gqa``) instead of
building an explicit mask and repeating the key/value heads.
"""

from __future__ import annotations

from thunder.core.proxies import NumberProxy, Proxy, TensorProxy

__all__ = ["constant_closure", "constant_value"]

# tags of symbols whose result is not a function of their arguments, or that change state outside their results
_NOT_A_FUNCTION = frozenset({"random", "side_effect", "inplace"})


def constant_closure(trace, proxy) -> list | None:
    """The bound symbols (in trace order) computing ``proxy`` from constants alone, or None where it depends on an
    input of the program, a random draw, a side effect, a symbolic size, or a tensor something updates in place
    (a view of it included) before the read."""
    if len(trace.scopes) > 1 or not isinstance(proxy, (TensorProxy, NumberProxy)):
        return None
    bsyms = trace.bound_symbols
    producer = {}
    for i, b in enumerate(bsyms):
        for o in b.flat_proxy_outs:
            producer.setdefault(o.name, i)  # an in-place update gives its argument's name again: the first defines
    needed, pending = set(), [proxy]
    while pending:
        p = pending.pop()
        if p.name in needed:
            continue
        i = producer.get(p.name)
        if i is None or _symbolic_shape(p):
            return None  # an input (or a value made outside the recorded program)
        needed.add(p.name)
        b = bsyms[i]
        if not _a_function(b):
            return None
        pending.extend(b.flat_proxy_args)
    # what is computed from those tensors (views among it) must not be updated in place: the update would change
    # the value without appearing in the chain of producers above
    derived = set(needed)
    for b in bsyms:
        if b.sym.id == "segment_end":  # an earlier read's marker: it keeps values alive, it changes none
            continue
        args = {a.name for a in b.flat_proxy_args}
        if not args & derived:
            continue
        if not _a_function(b):
            return None
        derived.update(o.name for o in b.flat_proxy_outs)
    chosen = {producer[n] for n in needed}
    return [b for i, b in enumerate(bsyms) if i in chosen]


def _a_function(bsym) -> bool:
    """Whether ``bsym``'s results are a function of its arguments and it changes nothing else (its decomposition
    included: a composite may draw random numbers inside)."""
    return not (_NOT_A_FUNCTION & set(bsym.sym.tags) or isinstance(bsym.kwargs.get("out"), Proxy)) and all(
        _a_function(s) for s in bsym.subsymbols)


def _symbolic_shape(p) -> bool:
    return isinstance(p, TensorProxy) and any(isinstance(d, NumberProxy) for d in p.shape)


def constant_value(trace, proxy, executors, closure):
    """The value of ``proxy``, computed by running ``closure`` (:func:`constant_closure`) on its own."""
    import torch

    from thunder.core.trace import _current_trace, from_trace
    from thunder.transforms.pipeline import run_pipeline

    probe = from_trace(trace)
    probe.fn_name = "constant_probe"
    probe.args = []
    probe.bound_symbols = list(closure)
    probe.output = (proxy,)
    token = _current_trace.set(None)
    try:
        final = run_pipeline(probe, executors, check_inplace=False)[-1]
        with torch.no_grad():
            (value,) = final.python_callable()()
    finally:
        _current_trace.reset(token)
    return value
