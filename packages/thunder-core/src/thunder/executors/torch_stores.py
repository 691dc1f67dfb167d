"""The torch executor's lowering of region updates of an input to in-place stores.

Functionalization turns ``cache[:b].index_copy_(2, pos, k)`` (litgpt's KV cache) into a functional program:

    v = cache[:b]                      # a view
    y = torch.index_copy(v, 2, pos, k) # a new tensor the size of the view
    x = setitem(cache, (slice(None, b),), y)  # a new tensor the size of the whole cache
    copy_to_out_(x, out=cache)         # and a third pass over it

which copies the whole cache three times to write one row. Where the program is free to, this pass writes the row
in place instead, as eager does: ``torch.Tensor.index_copy_(v, 2, pos, k)``, and later reads of ``y`` read ``v``,
of ``x`` read ``cache``. The same holds without the view (``cache.index_copy_(...)``, ``cache[idx] = k``).

A scatter into a tensor the trace has just created (``index_put(zeros(...), idx, g, True)``, the gradient of a
gather, ``scatter_into_fresh_in_place``) writes into that tensor in place too, as eager's backward kernels do,
instead of copying the whole buffer to write a few rows, when nothing else reads the fresh tensor; so does a scatter
into an input the program owns (a segment's accumulator, ``trace.owned_inputs``) and into the result of such a
scatter (one buffer for a loop of ``out.index_add_``, as in eager).

It is free to store into an input when: the input is written once in the trace (so the view keeps holding ``y``'s
values to the end); nothing reads the input or anything that may alias it between the in-place op's position and the copy (no
reader sees the new value early); neither ``y`` nor ``x`` is an output of the trace (a returned or saved tensor
must not turn into an alias of the input); and autograd is not involved (the input does not take a tracked update,
nothing requires grad).
"""

from __future__ import annotations

from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.trace import from_trace
from thunder.executors.torch_copies import _printed, memory_sets

__all__ = ["store_updates_in_place", "scatter_into_fresh_in_place", "torch_operator", "views_stored_into"]

# printed functional op -> the Tensor method that does it in place (same arguments after self)
IN_PLACE_METHODS = {
    "torch.index_copy": "torch.Tensor.index_copy_",
    "torch.index_add": "torch.Tensor.index_add_",
    "torch.index_put": "torch.Tensor.index_put_",
    "torch.scatter_add": "torch.Tensor.scatter_add_",
    "thunder.executors.torch_impls.index_put": "thunder.executors.torch_impls.index_put_",
    "thunder.executors.torch_impls.setitem": "torch.Tensor.__setitem__",
}
_SETITEM = "thunder.executors.torch_impls.setitem"
# ops whose output is a new tensor no one else holds
_FRESH = frozenset({"thunder.executors.torch_impls.full", "torch.zeros", "torch.zeros_like", "torch.full",
                    "torch.full_like", "torch.ones", "torch.ones_like"})
_GETITEM = "torch.Tensor.__getitem__"
# the same ops before dispatch (torch-language symbol ids)
_SCATTER_IDS = frozenset({"ltorch.index_copy", "ltorch.index_add", "ltorch.index_put", "ltorch.scatter_add"})


def _is_copy(bsym) -> bool:
    return bsym.sym.name.endswith("copy_to_out_") and "out" in bsym.kwargs


def _basic_key(key) -> bool:
    """Indexing that gives a view (ints, slices, ``...``, None), not a gather."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice)) for p in parts)


def _key_signature(key) -> tuple:
    """Two keys are the same when their leaves are the same values or the same proxies (by name; comparing
    proxies with == would record a constraint)."""
    leaves, spec = tree_flatten(key)
    return repr(spec), tuple(("proxy", x.name) if isinstance(x, Proxy) else ("value", repr(x)) for x in leaves)


def _scatter_into_view(bsyms, producer_of, update, dest):
    """(index of the scatter, the view) when ``update`` is ``setitem(dest, key, scatter(dest[key], ...))``."""
    key, value = update.args[1], update.args[2]
    if update.args[0].name != dest.name or not _basic_key(key) or not isinstance(value, TensorProxy):
        return None
    q = producer_of.get(value.name)
    if q is None or _printed(bsyms[q]) not in IN_PLACE_METHODS or not isinstance(bsyms[q].args[0], TensorProxy):
        return None
    view = bsyms[q].args[0]
    g = producer_of.get(view.name)
    if g is None or _printed(bsyms[g]) != _GETITEM or bsyms[g].args[0].name != dest.name:
        return None
    if _key_signature(bsyms[g].args[1]) != _key_signature(key):
        return None
    return q, view


def views_stored_into(trace) -> set[int]:
    """Positions of the views ``v = dest[key]`` in a functional trace (before dispatch) that head a region update
    of an input, ``copy_to_out_(setitem(dest, key, scatter(v, ...)), out=dest)``: the chain this module lowers to
    one in-place store. Dispatch keeps them out of fusion regions (a fusion would hand back a copy of the view,
    or a view of another form, and the whole of ``dest`` would be copied to write a few rows)."""
    bsyms = list(trace.bound_symbols)
    producer_of, _ = _producers_and_readers(bsyms)
    found: set[int] = set()
    for copy in bsyms:
        if not _is_copy(copy) or not isinstance(copy.args[0], TensorProxy):
            continue
        dest, p = copy.kwargs["out"], producer_of.get(copy.args[0].name)
        update = bsyms[p] if p is not None else None
        if update is None or update.sym.id != "ltorch.setitem" or len(update.args) < 3:
            continue
        key, value = update.args[1], update.args[2]
        if update.args[0].name != dest.name or not _basic_key(key) or not isinstance(value, TensorProxy):
            continue
        q = producer_of.get(value.name)
        if q is None or bsyms[q].sym.id not in _SCATTER_IDS or not isinstance(bsyms[q].args[0], TensorProxy):
            continue
        g = producer_of.get(bsyms[q].args[0].name)
        if (g is not None and bsyms[g].sym.id == "ltorch.getitem" and bsyms[g].args[0].name == dest.name
                and _key_signature(bsyms[g].args[1]) == _key_signature(key)):
            found.add(g)
    return found


_operators: dict = {}


def torch_operator(path: str):
    """The torch executor's symbol printed as ``path(...)``, made once (a symbol made per compile would also grow
    the caches keyed by symbol, ``tagged_symbol``'s)."""
    if path not in _operators:
        from thunder.executors.torchex import ex

        _operators[path] = ex.register_operator(path)
    return _operators[path]


def _producers_and_readers(bsyms) -> tuple[dict[str, int], dict[str, list[int]]]:
    """name -> the position of the op that makes it; name -> the positions of the ops that read it."""
    producer_of: dict[str, int] = {}
    readers: dict[str, list[int]] = {}
    for i, b in enumerate(bsyms):
        for o in b.flat_proxy_outs:
            producer_of[o.name] = i
        for a in b.flat_proxy_args:
            readers.setdefault(a.name, []).append(i)
    return producer_of, readers


def store_updates_in_place(trace, dests=None):
    """(See the module.) ``dests``: the names of the inputs whose updates are lowered (None: every input's)."""
    bsyms = list(trace.bound_symbols)
    producer_of, readers = _producers_and_readers(bsyms)
    writes: dict[str, int] = {}
    for b in bsyms:
        out = b.kwargs.get("out")
        if isinstance(out, TensorProxy):
            writes[out.name] = writes.get(out.name, 0) + 1
    memory = memory_sets(bsyms, trace.input_memory)
    outputs = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}

    replace: dict[int, object] = {}
    drop: set[int] = set()
    rename: dict[str, Proxy] = {}
    for j, copy in enumerate(bsyms):
        if not _is_copy(copy):
            continue
        x, dest = copy.args[0], copy.kwargs["out"]
        if dests is not None and dest.name not in dests:
            continue
        if writes.get(dest.name) != 1 or (dest.requires_grad and copy.kwargs.get("grad_enabled", True)):
            continue
        p = producer_of.get(x.name)
        if p is None or p in replace or p in drop:
            continue
        update = bsyms[p]
        found = _scatter_into_view(bsyms, producer_of, update, dest) if _printed(update) == _SETITEM else None
        if found is not None:  # v = dest[key]; y = scatter(v, ...); x = setitem(dest, key, y)
            op, view = found
            allowed, results = {p, j}, [update.args[2], x]
        elif _printed(update) in IN_PLACE_METHODS and update.args[0].name == dest.name:  # x = scatter(dest, ...)
            op, view, allowed, results = p, dest, {j}, [x]
        else:
            continue
        if any(r.name in outputs or r.requires_grad for r in results if isinstance(r, TensorProxy)):
            continue  # a returned or saved tensor must stay a tensor of its own
        if view.requires_grad or any(r in replace or r in drop for r in allowed | {op}):
            continue
        memory_of_dest = memory.find(dest.name)
        early = [i for i in range(op + 1, j + 1) if i not in allowed
                 and any(memory.find(a.name) == memory_of_dest for a in bsyms[i].flat_proxy_args)]
        if early or (view is not dest and readers.get(view.name) != [op]):
            continue  # a reader after the store would see the new value early
        store = bsyms[op]
        replace[op] = store.replace(sym=torch_operator(IN_PLACE_METHODS[_printed(store)]), output=None)
        drop.update(allowed)
        rename[store.flat_proxy_outs[0].name] = view
        for r in results:
            rename.setdefault(r.name, dest)
        for o in copy.flat_proxy_outs:
            rename[o.name] = dest
    if not replace:
        return trace

    from thunder.extend import swap_proxies

    new = from_trace(trace)
    new.bound_symbols = [swap_proxies(replace.get(i, b), rename) for i, b in enumerate(bsyms) if i not in drop]
    new.output = _swap_tree(trace.output, rename)
    return new


def scatter_into_fresh_in_place(trace):
    """``y = scatter(z, ...)`` where ``z`` is a tensor no one else holds and nothing else reads: the scatter writes
    into ``z`` in place and later reads of ``y`` (the trace's output included) read ``z``. ``z`` is a new tensor
    (``full``, ``zeros_like``), an input the program owns (``trace.owned_inputs``: a segment's accumulator), or
    the result of such a scatter (``out.index_add_`` once per expert: one buffer, no copy per expert)."""
    bsyms = list(trace.bound_symbols)
    producer_of, readers = _producers_and_readers(bsyms)
    outputs = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, Proxy)}
    owned = set(trace.owned_inputs)  # names (as the trace has them) of tensors the trace may write into
    replace: dict[int, object] = {}
    rename: dict[str, Proxy] = {}
    for i, b in enumerate(bsyms):
        if _printed(b) not in IN_PLACE_METHODS or _printed(b) == _SETITEM or not b.args:
            continue
        fresh, outs = b.args[0], b.flat_proxy_outs
        if not isinstance(fresh, TensorProxy) or len(readers.get(fresh.name, ())) != 1 or fresh.name in outputs \
                or len(outs) != 1:
            continue
        p = producer_of.get(fresh.name)
        if fresh.name not in owned and (p is None or _printed(bsyms[p]) not in _FRESH):
            continue
        replace[i] = b.replace(sym=torch_operator(IN_PLACE_METHODS[_printed(b)]), output=None)
        buffer = rename.get(fresh.name, fresh)
        rename[outs[0].name] = buffer
        owned.add(outs[0].name)  # a scatter into it may be in place too
    if not replace:
        return trace

    from thunder.extend import swap_proxies

    new = from_trace(trace)
    new.bound_symbols = [swap_proxies(replace.get(i, b), rename) for i, b in enumerate(bsyms)]
    new.output = _swap_tree(trace.output, rename)
    return new


def _swap_tree(tree, mapping):
    from thunder.core.pytree import tree_unflatten

    leaves, spec = tree_flatten(tree)
    return tree_unflatten([mapping.get(x.name, x) if isinstance(x, Proxy) else x for x in leaves], spec)
