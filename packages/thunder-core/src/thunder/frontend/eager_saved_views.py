"""Which view of a saved tensor eager's node saved, for the message of a failed version check.

Where eager's node saves a view (``linear``'s mm saves ``weight.t()``; ``v0 / t1`` saves ``v0 = t0.flatten()``)
thunder's node may save the view's base: its gradient reads the weight itself, and rematerialization recomputes a view from
its base in the backward rather than keep both. The memory, and so the version check, is the same; only eager's
message names the view: its shape, and "which is output 0 of AsStrided" where the view was made of a tensor
requiring grad (an updated view is regenerated as an as_strided of its base). This module finds, per saved tensor,
the view eager saved in its place; the node reads it only when a check fails, never on the cache-hit path.
"""

from __future__ import annotations

from thunder.core.proxies import TensorProxy
from thunder.grad.registry import saved_as_view
from thunder.transforms.remat import _VIEW_PRIMS, _walk

__all__ = ["eager_saved_views"]


def eager_saved_views(split, backward_trace) -> tuple:
    """Per saved tensor of ``split`` (in order): None where eager saved it as it is, else ``(shape_of,
    requires_grad)``: ``shape_of(t)`` the shape of eager's view of the saved tensor ``t``, ``requires_grad`` whether
    eager's view was made of a tensor requiring grad."""
    tensors = [p for p in split.saved if isinstance(p, TensorProxy)]
    names = {p.name for p in tensors}
    found = {**_views_made(split.forward, names), **_recomputed_views(split.forward, backward_trace, names),
             **_views_by_rule(split.forward, names)}
    if not found:
        return ()
    return tuple((found[p.name], bool(p.requires_grad)) if p.name in found else None for p in tensors)


def _views_by_rule(forward, names) -> dict:
    """Saved tensors that an op's eager node saves as a view (grad/registry.py ``register_saved_as_view``)."""
    import inspect

    found = {}
    for b in forward.bound_symbols:
        views = saved_as_view(b.sym.id)
        if not views:
            continue
        bound = inspect.signature(b.sym.meta).bind(*b.args, **b.kwargs).arguments
        for param, view in views.items():
            p = bound.get(param)
            if isinstance(p, TensorProxy) and p.name in names:
                found.setdefault(p.name, lambda t, view=view: list(view(t).shape))
    return found


def _views_made(forward, names) -> dict:
    """Saved tensors the forward made as views (a view returned, saved detached: no grad_fn to name)."""
    producers = _producers(forward)
    return {o.name: _own_shape for b in forward.bound_symbols if _surely_a_view(b, producers)
            for o in b.flat_proxy_outs if isinstance(o, TensorProxy) and o.name in names}


def _producers(forward) -> dict:
    return {o.name: b for b in forward.bound_symbols for o in b.flat_proxy_outs}


def _surely_a_view(b, producers) -> bool:
    """Whether eager's op for ``b`` made a view: a reshape copies a non-contiguous tensor, which only a tensor the
    forward computed (not an input, not a view) surely is not."""
    if not _makes_views(b):
        return False
    if all(s.sym.id != "prims.reshape" for s in _walk([b])):
        return True
    source = next((p for p in b.flat_proxy_args if isinstance(p, TensorProxy)), None)
    made = producers.get(source.name) if source is not None else None
    return made is not None and not _makes_views(made)


def _makes_views(b) -> bool:
    """Whether every tensor ``b`` makes is a view (the number arithmetic of symbolic sizes aside)."""
    return all(s.sym.id in _VIEW_PRIMS for s in _walk([b])
               if not s.subsymbols and any(isinstance(o, TensorProxy) for o in s.flat_proxy_outs))


def _own_shape(t) -> list:
    return list(t.shape)


def _recomputed_views(forward, backward_trace, names) -> dict:
    """Saved tensors the backward reads only to remake views of them the forward made (rematerialization saved the
    base): eager's node saved the first such view. Its shape is the trace's where static."""
    # (a reshape eager did by copying would have saved memory of its own, which no update of the base reaches)
    producers = _producers(forward)
    first, other = {}, set()
    for b in backward_trace.bound_symbols:
        if "side_effect" in b.sym.tags:
            continue
        read = {p.name for p in b.flat_proxy_args if isinstance(p, TensorProxy)} & names
        outs = [o for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
        made = producers.get(outs[0].name) if len(outs) == 1 else None
        for name in read:
            if made is not None and _makes_views(made):
                first.setdefault(name, outs[0])
            else:
                other.add(name)
    return {name: (lambda t, shape=list(view.shape): shape) for name, view in first.items()
            if name not in other and all(isinstance(d, int) for d in view.shape)}
