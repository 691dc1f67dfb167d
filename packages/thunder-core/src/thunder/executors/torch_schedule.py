"""The torch executor's schedule: independent chains run one after another.

A foreach optimizer step is written breadth-first (``_foreach_lerp_`` over every parameter, then ``_foreach_mul_``
over every parameter, ...), so each op streams every parameter's state through memory once more. Its trace is a
set of per-parameter chains that share nothing, and run as separate kernels anyway on the torch executor: run
chain by chain (lerp, mul, addcmul, sqrt, div, add, addcdiv of parameter 0, then of parameter 1, ...), a
parameter's tensors are still in cache for the next op of its chain, and each chain's temporary is freed before
the next one allocates (malloc hands the same, warm block back). This is what eager's for-loop code does, minus
its Python.

Independent means: no value flows between the chains (a constant made from nothing, ``torch.tensor(1.0)``, does not
join its readers; it runs just before the first) and no chain writes (``out=``) memory another one touches, views
included. Inside a chain, and for everything that is not a pure torch or number op (grad-mode switches, random
ops, ops that check tensor data, other executors' symbols), the order stays as it was: those are barriers that
nothing moves across. What it assumes: no op of a chain raises at run time (shapes were checked when tracing,
ops checking data are barriers), so no other chain can observe where it ran.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.trace import from_trace
from thunder.executors.torch_copies import Sets, memory_sets

__all__ = ["run_chains_one_by_one"]

# executor-symbol ids (without the executor prefix) of torch-executor ops that change outside state
_GLOBAL_STATE = frozenset({"torch.manual_seed", "torch.set_rng_state",
                           "thunder.executors.torch_impls.get_rng_state"})


def _movable(bsym, torch_ex) -> bool:
    """Whether ``bsym`` is a pure op that may run earlier or later: a torch-executor op that writes nothing but
    its ``out=`` argument, or number arithmetic of the python executor."""
    from thunder.executors.pythonex import NUMBER_OP_IDS

    if bsym.sym.executor is not torch_ex:
        return bsym.sym.id in NUMBER_OP_IDS
    tags = bsym.sym.tags
    if "random" in tags or ("side_effect" in tags and "out" not in bsym.kwargs) or bsym.may_raise_on_data():
        return False
    name = f"{bsym.sym.module}.{bsym.sym.name}"
    return not (bsym.sym.id.startswith(f"{torch_ex.name}.opaque.") or name in _GLOBAL_STATE or bsym.subtraces)


def _chains(segment, memory) -> list[list]:
    """The bound symbols of ``segment`` (movable ones) in chain-by-chain order."""
    n = len(segment)
    joined = Sets()
    producer: dict[str, int] = {}
    sources = set()  # ops reading no proxy: they join no chain, and run right before their first reader
    for i, b in enumerate(segment):
        args = b.flat_proxy_args
        if not args:
            sources.add(i)
        # a symbolic size of an output is read too: it must be defined before (``split``'s computed lengths)
        sizes = [d for o in b.flat_proxy_outs if isinstance(o, TensorProxy) for d in o.shape if isinstance(d, Proxy)]
        for a in (*args, *sizes):
            j = producer.get(a.name)
            if j is not None and j not in sources:
                joined.union(i, j)
        for o in b.flat_proxy_outs:
            producer[o.name] = i
    # every op touching memory that the segment writes goes in one chain: their order is kept
    written = {memory.find(b.kwargs["out"].name) for b in segment if "out" in b.kwargs}
    first_toucher: dict = {}
    for i, b in enumerate(segment):
        for p in (*b.flat_proxy_args, *b.flat_proxy_outs):
            if isinstance(p, TensorProxy):
                m = memory.find(p.name)
                if m in written:
                    joined.union(i, first_toucher.setdefault(m, i))
    size: dict = {}
    for i in range(n):
        r = joined.find(i)
        size[r] = size.get(r, 0) + 1
    lazy = {i for i in sources if size[joined.find(i)] == 1}
    source_of = {o.name: i for i in lazy for o in segment[i].flat_proxy_outs}
    read = {a.name for b in segment for a in b.flat_proxy_args}
    lazy = {i for i in lazy if any(o.name in read for o in segment[i].flat_proxy_outs)}
    chains: dict = {}
    for i in range(n):
        if i not in lazy:
            chains.setdefault(joined.find(i), []).append(i)
    order, done = [], set()

    def emit(i):
        for a in segment[i].flat_proxy_args:
            j = source_of.get(a.name)
            if j is not None and j in lazy and j not in done:
                emit(j)
        done.add(i)
        order.append(segment[i])

    for chain in chains.values():  # dicts keep insertion order: chains in the order they start
        for i in chain:
            emit(i)
    return order


def run_chains_one_by_one(trace, torch_ex):
    bsyms = list(trace.bound_symbols)
    memory = None
    new_bsyms, segment, changed = [], [], False

    def flush():
        nonlocal changed
        if len(segment) > 2:
            ordered = _chains(segment, memory)
            changed = changed or any(a is not b for a, b in zip(ordered, segment))
            new_bsyms.extend(ordered)
        else:
            new_bsyms.extend(segment)
        segment.clear()

    for b in bsyms:
        if _movable(b, torch_ex):
            if memory is None:
                memory = memory_sets(bsyms)
            segment.append(b)
        else:
            flush()
            new_bsyms.append(b)
    flush()
    if not changed:
        return trace
    new = from_trace(trace)
    new.bound_symbols = new_bsyms
    return new
