"""A backward specialized for outputs the loss does not use.

An output whose cotangent is None (the loss does not reach it: a segment's output kept for continuations of the
program that this call does not take, an auxiliary output) gets a zero cotangent. Eager's engine never runs the
nodes that only such outputs reach; the compiled backward would run them on the zero, which costs work and turns
into NaN where a derivative is infinite (sqrt at 0). A backward is linear in its cotangents, so this pass drops
each op whose every cotangent operand is such a zero (its result is zero), and each sum of a zero with a used
value (later reads read the value). Where a dropped zero would have to be made after all (an op mixing it with a
used value other than such a sum, or a gradient that is only zero terms), only the sums with a zero cotangent
argument are dropped. A sum of a zero term with a value it cannot be read as (an alias of what the backward reads or
returns) adds -0.0 instead, which leaves every float as it is.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.core.trace import from_trace
from thunder.executors.torch_copies import _printed
from thunder.transforms.del_last_used import DEL, del_last_used

__all__ = ["without_zero_cotangents"]


def _makes_new_tensor(bsym) -> bool:
    from thunder.executors.torchex import ELEMENTWISE

    printed = _printed(bsym)
    return (printed in _NEW_TENSOR or printed.startswith("torch.ops.aten.")
            or (printed in ELEMENTWISE.values() and printed != "torch.where"))


# ops of the torch executor whose result never aliases an argument
_NEW_TENSOR = frozenset({"torch.matmul", "torch.nn.functional.linear", "torch.cat",
                         "thunder.executors.torch_impls.div", "thunder.executors.torch_impls.take",
                         "torch.index_select"})


# an island's backward (grad/torch_island.py): PyTorch's autograd on the op's recorded graph, which, given None for
# the cotangent of an output, never reaches what only that output depends on, as eager (an input only it reads
# gets None, not zeros)
_ISLAND_BACKWARD = "thunder.grad.torch_island.backward"


def _shape_key(p: TensorProxy) -> tuple:
    return tuple(d if isinstance(d, int) else ("sym", d.name) for d in p.shape)


def _same_layout(a, b) -> bool:
    return (isinstance(a, TensorProxy) and isinstance(b, TensorProxy) and a.dtype is b.dtype
            and a.device == b.device and _shape_key(a) == _shape_key(b))


def without_zero_cotangents(backward_trace, zero_names: frozenset, cotangent_names: frozenset = frozenset()):
    """``backward_trace`` (as lowered, with its ``del`` statements) specialized for the arguments ``zero_names``
    being zero: (the trace, or None where nothing changes; the names of ``zero_names`` it still reads).

    A backward is linear in the cotangents (``cotangent_names``): an op whose every cotangent operand is zero makes a
    zero, and is dropped, as eager's engine never runs the nodes that only unused outputs reach (which would turn
    the zero into NaN through an infinite derivative: sqrt at 0). Where such a zero would have to be made after all
    (an op mixing it with a used cotangent's value, other than the sums dropped below, or a gradient returned), only
    the sums with a zero cotangent are dropped, as before."""
    from thunder.extend.regions import count_uses

    bsyms = [b for b in backward_trace.bound_symbols if b.sym.id != DEL.id]
    producer = {o.name: b for b in bsyms for o in b.flat_proxy_outs}
    readers = count_uses(bsyms, ())  # reads by ops only: a returned sum is never dropped
    returned = {p.name for p in tree_flatten(backward_trace.output)[0] if isinstance(p, Proxy)}
    found = _dropping_zero_terms(bsyms, backward_trace, zero_names, cotangent_names | zero_names,
                                 producer, readers, returned)
    if found is None:
        return _without_zero_sums(bsyms, backward_trace, zero_names, cotangent_names | zero_names, producer,
                                  readers, returned)
    return found


def _dropping_zero_terms(bsyms, backward_trace, zero_names, cotangents, producer, readers, returned):
    zero, made_zero, cotangents = set(zero_names), set(), set(cotangents)
    # targets of stores without outputs: a sum read as its operand must be none of them (its out= buffers are
    # not written: an op writing into a value read as another allocates its result instead)
    stored = {b.args[0].name for b in bsyms if not b.flat_proxy_outs and b.args and isinstance(b.args[0], Proxy)}
    rename: dict[str, Proxy] = {}
    read_as = set()  # names of the values sums are read as
    kept = []

    def name(p):
        return rename.get(p.name, p).name

    dropped_zeros = {}  # index -> an op dropped for making a zero
    for index, b in enumerate(bsyms):
        as_written = b  # its readers were counted with its out= buffer
        out_buffer = b.kwargs.get("out")
        if isinstance(out_buffer, Proxy) and (name(out_buffer) in made_zero or out_buffer.name in rename
                                              or out_buffer.name in read_as):
            # its buffer was never made, or is another value now (a cotangent given to the backward, say)
            b = b.replace(kwargs={k: v for k, v in b.kwargs.items() if k != "out"})
            out_buffer = None
        operands = {name(a) for a in tree_flatten((b.args, {k: v for k, v in b.kwargs.items() if k != "out"}))[0]
                    if isinstance(a, Proxy)}
        outs = _defined_or_written(b, name)
        nonzero = operands & (cotangents - zero)  # before a store's target becomes a cotangent's value
        if operands & cotangents:
            cotangents |= outs
        if not operands & zero:
            kept.append((index, b))
            continue
        if not nonzero:
            zero |= outs  # every cotangent term is zero: so is the result
            made_zero |= outs
            dropped_zeros[index] = b
            continue
        if _printed(b) == _ISLAND_BACKWARD:  # PyTorch's autograd takes None for an unused output's cotangent
            kept.append((index, b.replace(args=(b.args[0], tuple(None if isinstance(c, Proxy) and name(c) in zero
                                                                 else c for c in b.args[1])))))
            continue
        other = _droppable_sum(as_written, zero, name, producer, readers, returned)
        if other is None and operands & made_zero:
            other = _sum_read_only(b, zero, name, stored, returned)
        if other is not None:
            rename[b.flat_proxy_outs[0].name] = target = rename.get(other.name, other)  # a sum removed: its operand
            read_as.add(target.name)
            continue
        if operands & made_zero:
            b = _plus_negative_zero(b, zero, name)
            if b is None:
                return None  # a zero this backward no longer computes would have to be made
        kept.append((index, b))
    if not made_zero and not rename:
        return None
    zero_gradients = {name(p) for p in tree_flatten(backward_trace.output)[0] if isinstance(p, Proxy)} & made_zero
    if zero_gradients:
        # a gradient that is all zero terms is still computed from the zeros, as before (eager gives zeros where the
        # input reaches a used output through a zero derivative, floor's); only the ops it needs, so the zero terms
        # of the other gradients stay dropped (computed, they could be NaN: std over one element, fuzz seed 1796)
        kept.extend(_computing(zero_gradients, dropped_zeros))
        kept.sort(key=lambda entry: entry[0])
    return _specialized(backward_trace, [b for _, b in kept], rename, returned, zero_names)


def _computing(names: set, ops: dict) -> list:
    """The (index, op) entries of ``ops`` that the values ``names`` are computed by, directly or through each other."""
    made_by = {o.name: i for i, b in ops.items() for o in b.flat_proxy_outs}
    needed, pending = set(), [made_by[n] for n in names if n in made_by]
    while pending:
        i = pending.pop()
        if i in needed:
            continue
        needed.add(i)
        pending.extend(made_by[a.name] for a in ops[i].flat_proxy_args if a.name in made_by)
    return [(i, ops[i]) for i in needed]


def _defined_or_written(b, name) -> set[str]:
    """Names whose value ``b`` sets: its outputs, its ``out=`` buffer, and the target of a store without outputs
    (``scatter_add_(buf, ...)``, max's gradient): a buffer a cotangent is added into is a cotangent's value from
    there on, and a zero where everything added was zero."""
    outs = {o.name for o in b.flat_proxy_outs}
    out_buffer = b.kwargs.get("out")
    if isinstance(out_buffer, Proxy):
        outs.add(name(out_buffer))
    if not outs and b.args and isinstance(b.args[0], Proxy):
        outs.add(name(b.args[0]))
    return outs


def _sum_with_zero(b, zero, name):
    """(``g``, ``t``) of ``g = torch.add(zero, t)`` with ``t`` not a zero, else None."""
    if _printed(b) != "torch.add" or len(b.args) != 2 or len(b.flat_proxy_outs) != 1:
        return None
    out, (x, y) = b.flat_proxy_outs[0], b.args
    other = y if isinstance(x, Proxy) and name(x) in zero else x if isinstance(y, Proxy) and name(y) in zero else None
    if not isinstance(other, Proxy) or name(other) in zero:
        return None
    return out, other


def _droppable_sum(b, zero, name, producer, readers, returned):
    """``t`` of ``g = torch.add(zero, t)`` where ``g`` can be read as ``t``, else None: no alpha, out= only into
    ``t``, ``t`` a new tensor the backward computed (an elementwise op, a matmul, a backward kernel) read by that add
    only and not returned (no gradient returned becomes an alias of another or of a saved tensor), of the sum's
    shape and dtype."""
    found = _sum_with_zero(b, zero, name)
    if found is None:
        return None
    out, other = found
    plain = not b.kwargs or (set(b.kwargs) == {"out"} and getattr(b.kwargs["out"], "name", None) == other.name)
    if (plain and other.name not in returned and readers.get(other.name) == 1 + ("out" in b.kwargs)
            and _new_or_its_reshape(other, producer, readers, returned) and _same_layout(out, other)):
        return other
    return None


# reshapes of the torch executor: of a contiguous tensor, a view with contiguous strides, as the sum's result has
_RESHAPES = frozenset({"torch.reshape", "torch.Tensor.reshape"})


def _new_or_its_reshape(t, producer, readers, returned) -> bool:
    """Whether ``t`` is a new tensor the backward computed, or a reshape of one that nothing else reads or returns
    (a gradient reshaped back to an output's shape, as eager's view node passes it on): read in place of a sum
    with ``t``, it aliases nothing else that is read, written or returned."""
    made = producer.get(t.name)
    if made is None:
        return False
    if _makes_new_tensor(made):
        return True
    if _printed(made) not in _RESHAPES or not made.args or not isinstance(made.args[0], TensorProxy):
        return False
    base = made.args[0]
    return (readers.get(base.name) == 1 and base.name not in returned
            and _new_or_its_reshape(base, producer, readers, returned))


def _plus_negative_zero(b, zero, name):
    """``g = torch.add(t, -0.0)`` for ``g = torch.add(zero, t)`` (or ``t + zero``) whose result is of ``t``'s dtype,
    else None: ``x + -0.0`` is ``x`` for every float, so the sum keeps its buffer (``out=``) and its place while the
    zero term is not computed (a sum whose operand may alias what the backward reads or returns: a cotangent
    reshaped, expanded or transposed; fuzz seed 520255)."""
    found = _sum_with_zero(b, zero, name)
    if found is None or set(b.kwargs) - {"out"}:
        return None
    out, other = found
    if not isinstance(other, TensorProxy) or other.dtype is not out.dtype:
        return None
    return b.replace(args=(other, -0.0))


def _sum_read_only(b, zero, name, stored, returned):
    """``t`` of ``g = torch.add(zero, t)`` where ``zero`` is a zero this backward no longer computes, ``g`` is not
    returned and neither is the target of a store: ``g`` is read as ``t``, as eager's engine passes ``t`` on (``t``
    may be a cotangent argument; the ops writing into ``g`` or ``t`` through ``out=`` allocate their results
    instead)."""
    found = _sum_with_zero(b, zero, name)
    if found is None:
        return None
    out, other = found
    if out.name in returned or out.name in stored or other.name in stored or set(b.kwargs) - {"out"}:
        return None
    return other if _same_layout(out, other) else None


def _specialized(backward_trace, kept, rename, returned, zero_names):
    from thunder.extend import swap_proxies
    from thunder.transforms.dce import dce

    new = from_trace(backward_trace)
    new.bound_symbols = [swap_proxies(b, rename) for b in kept]
    if rename:
        leaves, spec = tree_flatten(backward_trace.output)
        new.output = tree_unflatten([rename.get(x.name, x) if isinstance(x, Proxy) else x for x in leaves], spec)
    new = dce(new)  # the index or zero buffer of a dropped store (max's gradient) is no longer read
    read = {a.name for b in new.bound_symbols for a in b.flat_proxy_args} | returned
    return del_last_used(new), frozenset(n for n in zero_names if n in read)


def _without_zero_sums(bsyms, backward_trace, zero_names, cotangents, producer, readers, returned):
    """Only the sums ``g = torch.add(zero, t)`` with a zero cotangent dropped (``_droppable_sum``), and eager's
    errors raised on reaching an op (``raise_in_backward``) that only the zeros reach: eager never reaches it."""
    rename: dict[str, Proxy] = {}
    kept = []
    zero = _zero_terms(bsyms, zero_names, cotangents)
    for b in bsyms:
        if b.sym.name == "raise_in_backward" and b.args[0].name in zero:
            rename[b.flat_proxy_outs[0].name] = rename.get(b.args[0].name, b.args[0])
            continue
        other = _droppable_sum(b, zero_names, lambda p: p.name, producer, readers, returned)
        if other is not None:
            rename[b.flat_proxy_outs[0].name] = rename.get(other.name, other)  # a sum removed before: its operand
            continue
        kept.append(b)
    if not rename:
        return None, zero_names
    return _specialized(backward_trace, kept, rename, returned, zero_names)


def _zero_terms(bsyms, zero_names, cotangents) -> set[str]:
    """Names of the values of ``bsyms`` computed from the zeros ``zero_names`` and no other cotangent: zeros."""
    zero, cotangents = set(zero_names), set(cotangents)
    for b in bsyms:
        operands = {a.name for a in tree_flatten((b.args, {k: v for k, v in b.kwargs.items() if k != "out"}))[0]
                    if isinstance(a, Proxy)}
        outs = _defined_or_written(b, lambda p: p.name)
        nonzero = operands & (cotangents - zero)
        if operands & cotangents:
            cotangents |= outs
        if operands & zero and not nonzero:
            zero |= outs
    return zero
