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
from thunder.core.shapes import numel
from thunder.core.trace import from_trace
from thunder.executors.torch_copies import Sets, _is_copy, memory_sets
from thunder.executors.torch_stores import torch_operator

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


def _chains(segment, memory, torch_ex) -> list:
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
    # every op touching memory that the segment writes goes in one chain: their order is kept. A copy_to_out_ writes
    # its computed value's memory too (``out`` may alias it from there on): every other read of that value, a
    # snapshot's clone of a fill CSE merged with the copied one, stays before the copy
    written = {memory.find(b.kwargs["out"].name) for b in segment if "out" in b.kwargs}
    written |= {memory.find(b.args[0].name) for b in segment if _is_copy(b) and isinstance(b.args[0], TensorProxy)}
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
    version_of = {}  # what an out= op returned -> the tensor it wrote into
    for b in segment:
        if "out" in b.kwargs:
            out = b.kwargs["out"].name
            for o in b.flat_proxy_outs:
                version_of[o.name] = version_of.get(out, out)
    order, done = [], set()

    def emit_sources(b):
        for a in b.flat_proxy_args:
            j = source_of.get(a.name)
            if j is not None and j in lazy and j not in done:
                done.add(j)
                order.append(segment[j])

    # dicts keep insertion order: chains in the order they start; small alike chains in lockstep, one foreach call
    # per step where their ops allow it
    for group in _lockstep_groups(list(chains.values()), segment):
        for step in zip(*([segment[i] for i in chain] for chain in group)):
            for b in step:
                emit_sources(b)
            grouped = _foreach(step, version_of) if len(step) > 1 else None
            order.extend([grouped] if grouped is not None else step)
    return order


# A chain whose tensors all fit in this many bytes costs more in Python calls than in memory traffic: alike ones are
# run in lockstep (op k of each, then op k + 1 of each) as long as their tensors together stay this far below the
# cache, each step one torch._foreach_* call, as eager's foreach optimizers do. Larger chains run one by one, each
# chain's next op finding its tensors still in cache, and each temporary (Adam's denominator) freed before the next
# chain allocates its own; also chains that allocate nothing (SGD with momentum: on a GPT-sized set, 13M parameters,
# lockstep took 2-10% more CPU time than eager's for-loop, one by one 0.99x; eager's own foreach, lockstep, is
# 7-15% slower than its for-loop there, benchmarks/optimizer_step.py).
SMALL_CHAIN_BYTES = 1 << 16
LOCKSTEP_BYTES = 1 << 20


def _chain_bytes(bsyms) -> int | None:
    """Bytes of the distinct tensors ``bsyms`` touch; None when one is not a CPU tensor of static shape."""
    seen, total = set(), 0
    for b in bsyms:
        for p in (*b.flat_proxy_args, *b.flat_proxy_outs):
            if isinstance(p, TensorProxy) and p.name not in seen:
                seen.add(p.name)
                if p.device.type != "cpu" or not all(isinstance(d, int) for d in p.shape):
                    return None
                total += p.dtype.bytes * numel(p.shape)
    return total


def _lockstep_groups(chains, segment) -> list[list]:
    """``chains`` cut into groups run together: each large chain alone, the others together with
    the chains of the same ops."""
    groups, open_groups = [], {}  # signature -> the group chains of that signature join
    for chain in chains:
        bsyms = [segment[i] for i in chain]
        size = _chain_bytes(bsyms)
        allocates = any("out" not in b.kwargs and any(isinstance(o, TensorProxy) for o in b.flat_proxy_outs)
                        for b in bsyms)
        if size is None or size > SMALL_CHAIN_BYTES:
            groups.append([chain])
            continue
        signature = (allocates, *(b.sym.id for b in bsyms))
        entry = open_groups.get(signature)
        if entry is None or (allocates and entry[1] + size > LOCKSTEP_BYTES):
            entry = open_groups[signature] = [[], 0]
            groups.append(entry[0])
        entry[0].append(chain)
        entry[1] += size
    return groups


# torch function of one elementwise op -> (its foreach form, the positional argument that may be a list of numbers,
# the keyword that may be)
_FOREACH = {
    "torch.add": ("_foreach_add", 1, None), "torch.sub": ("_foreach_sub", 1, None),
    "torch.mul": ("_foreach_mul", 1, None), "torch.div": ("_foreach_div", 1, None),
    "torch.maximum": ("_foreach_maximum", None, None), "torch.minimum": ("_foreach_minimum", None, None),
    "torch.addcmul": ("_foreach_addcmul", None, "value"), "torch.addcdiv": ("_foreach_addcdiv", None, "value"),
    "torch.lerp": ("_foreach_lerp", 2, None),
    **{f"torch.{name}": (f"_foreach_{name}", None, None) for name in (
        "sqrt", "rsqrt", "exp", "log", "neg", "abs", "sigmoid", "tanh", "reciprocal")},
}


def _foreach(step, version_of):
    """One bound symbol running the ops of ``step`` (one per chain, the same torch function) as a single
    ``torch._foreach_*`` call, or None where they do not fit one: CPU only, where a foreach op is the very loop of
    per-tensor ops (bit for bit the same), tensors of the output's shape (no broadcasting), and numbers that differ
    between the chains only where the foreach op takes a list of numbers. ``out=`` must be the first argument
    itself (``version_of``: what an ``out=`` op returned -> the tensor it wrote): that is the in-place form."""
    from thunder.core.symbol import BoundSymbol, tagged_symbol

    first = step[0]
    form = _FOREACH.get(f"{first.sym.module}.{first.sym.name}")
    if form is None:
        return None
    name, number_list_arg, number_list_kwarg = form
    if any(b.sym is not first.sym or len(b.args) != len(first.args) or b.kwargs.keys() != first.kwargs.keys()
           or len(b.flat_proxy_outs) != 1 for b in step):
        return None
    outs = [b.flat_proxy_outs[0] for b in step]
    if any(not isinstance(o, TensorProxy) or o.device.type != "cpu" for o in outs):
        return None
    in_place = "out" in first.kwargs
    if in_place and any(not isinstance(b.args[0], TensorProxy)
                        or version_of.get(b.args[0].name, b.args[0].name) != version_of.get(b.kwargs["out"].name,
                                                                                            b.kwargs["out"].name)
                        for b in step):
        return None

    def combine(values, numbers_may_differ):
        """(the foreach argument, its kind: "tensors", "number" or "numbers"), or (None, None)."""
        if all(isinstance(v, TensorProxy) for v in values):
            if any(v.shape != o.shape or v.device.type != "cpu" or v.dtype != o.dtype for v, o in zip(values, outs)):
                return None, None
            return list(values), "tensors"
        if not all(_number(v) for v in values):
            return None, None
        if all(not isinstance(v, Proxy) and type(v) is type(values[0]) and v == values[0] for v in values):
            return values[0], "number"
        return (list(values), "numbers") if numbers_may_differ else (None, None)

    args, kinds = [], []
    for j in range(len(first.args)):
        value, kind = combine([b.args[j] for b in step], j == number_list_arg)
        if kind is None:
            return None
        args.append(value)
        kinds.append(kind)
    kwargs = {}
    for key in first.kwargs:
        if key == "out":
            continue
        value, kind = combine([b.kwargs[key] for b in step], key == number_list_kwarg)
        if kind is None or (key == "alpha" and kind != "number"):
            return None
        if kind == "numbers":  # the overload taking a list of numbers has it positional (``scalars``)
            args.append(value)
            kinds.append(kind)
        else:
            kwargs[key] = value
    # only the overload taking two lists of tensors has alpha
    if kinds[0] != "tensors" or ("alpha" in kwargs and (len(kinds) < 2 or kinds[1] != "tensors")):
        return None
    if in_place:
        op = tagged_symbol(torch_operator("thunder.executors.torch_impls.foreach_in_place"),
                           ("side_effect",))  # it writes its first list
        return BoundSymbol(op, (f"{name}_", *args), kwargs, tuple(outs), (), first.source)
    op = torch_operator(f"torch.{name}")
    return BoundSymbol(op, tuple(args), kwargs, tuple(outs), (), first.source)


def _number(v) -> bool:
    from thunder.core.proxies import NumberProxy

    if isinstance(v, Proxy):
        return isinstance(v, NumberProxy) and v.python_type in (int, float)
    return type(v) in (int, float)


def run_chains_one_by_one(trace, torch_ex):
    bsyms = list(trace.bound_symbols)
    memory = None
    new_bsyms, segment, changed = [], [], False

    def flush():
        nonlocal changed
        if len(segment) > 2:
            ordered = _chains(segment, memory, torch_ex)
            changed = changed or any(a is not b for a, b in zip(ordered, segment))
            new_bsyms.extend(ordered)
        else:
            new_bsyms.extend(segment)
        segment.clear()

    for b in bsyms:
        if _movable(b, torch_ex):
            if memory is None:
                memory = memory_sets(bsyms, trace.input_memory)
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
