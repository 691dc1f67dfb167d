"""Eager's error for an in-place update, with gradients recorded, of a view autograd cannot rebase.

Eager's autograd records how each view was made. A view made under ``no_grad``, or one of the outputs of an op
returning several views (``unbind``, ``split``, ``chunk``), or a view of such a view, must not be updated in place
while gradients are recorded and the update involves a tensor requiring grad: eager raises ("A view was created in
no_grad mode and is being modified inplace with grad mode enabled", "Output 0 of Unbind is a view and is being
modified inplace"...). Such a view read by an op recording gradients after its memory was updated in place (through
its base or another view, even under ``no_grad``) fails too ("its base or another view of its base has been modified
inplace"): eager makes the view's grad_fn anew there. Thunder's functional trace would compute a gradient instead.
Where an update or a read is such a case, the views are replayed on meta tensors in their grad modes and PyTorch
itself gives the message.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes
from thunder.core.proxies import TensorProxy, pyval
from thunder.core.pytree import tree_map

__all__ = ["check_view_update", "ViewVersions"]


def check_view_update(a: TensorProxy, value_requires_grad: bool, key=None) -> None:
    """Raises eager's RuntimeError where updating ``a`` in place now (grad mode on) fails in eager; ``key``: a basic
    index, where the update writes ``a[key]`` (eager updates that view, whose name its message gives)."""
    from thunder.core.trace import get_tracectx

    versions = getattr(get_tracectx(), "view_versions", None)
    if versions is not None and not versions.cannot_rebase(a):  # the common case, without walking the trace
        return
    if not (value_requires_grad or (versions.requires_grad(a) if versions is not None else a.requires_grad)):
        return
    if not (dtypes.is_float_dtype(a.dtype) or dtypes.is_complex_dtype(a.dtype)):  # autograd does not track it
        return
    chain = _view_chain(a)
    if not any(not grad_enabled or isinstance(b.output, (tuple, list)) for b, grad_enabled, _ in chain):
        return
    replayed = _replayed(chain, versions)
    if replayed is None:
        return
    view = replayed[1]
    other = torch.zeros((), dtype=view.dtype, device="meta").requires_grad_(value_requires_grad)
    try:
        with torch.enable_grad():
            if key is not None:
                view = view[tree_map(_argument, key)]
            view.add_(other)
    except RuntimeError as e:
        raise RuntimeError(str(e)) from None


class ViewVersions:
    """While the program is traced (``on_record``, ``trace.view_versions``): the version of its memory each view
    eager cannot rebase had when it was made, so that an op reading it with grad recorded after an update raises
    eager's error; and which memory requires grad now (``y.mul_(w)`` makes y's views require grad too)."""

    def __init__(self):
        self._memory: dict[str, int] = {}  # tensor name -> its memory (views share it)
        self._updates: dict[int, int] = {}  # memory -> in-place updates so far
        self._made_at: dict[str, int] = {}  # name of a view eager cannot rebase -> its memory's updates when made
        self._updated_with_grad: set[int] = set()  # memory an in-place update made require grad
        self.source_required_grad: dict[str, bool] = {}  # view name -> whether what it views required grad then

    def _of(self, p: TensorProxy) -> int:
        return self._memory.setdefault(p.name, len(self._memory))

    def cannot_rebase(self, p: TensorProxy) -> bool:
        """Whether ``p`` is a view made under no_grad or by an op returning several views, or a view of one."""
        return p.name in self._made_at

    def requires_grad(self, p: TensorProxy) -> bool:
        return p.requires_grad or self._of(p) in self._updated_with_grad

    def on_record(self, bsym) -> None:
        from thunder.transforms.functionalize import OWN_VERSION_COUNTER, is_view, updated_by

        tensors = [p for p in bsym.flat_proxy_args if isinstance(p, TensorProxy)]
        outs = [o for o in bsym.flat_proxy_outs if isinstance(o, TensorProxy)]
        target = updated_by(bsym) if "inplace" in bsym.sym.tags else None
        if torch.is_grad_enabled():  # its target is check_view_update's; making a view reads the base's grad_fn too
            for p in tensors:
                if p is not target and self.cannot_rebase(p) and self.requires_grad(p) and \
                        self._updates.get(self._of(p), 0) != self._made_at[p.name]:
                    _raise_on_read(p, self)
        if target is not None:
            memory = self._of(target)
            self._updates[memory] = self._updates.get(memory, 0) + 1
            self._memory.update((o.name, memory) for o in outs)
            if target.requires_grad:
                self._updated_with_grad.add(memory)
        elif is_view(bsym) and tensors and bsym.sym.id not in OWN_VERSION_COUNTER:  # x.data counts its updates apart
            memory = self._of(tensors[0])
            self._memory.update((o.name, memory) for o in outs)
            self.source_required_grad.update((o.name, self.requires_grad(tensors[0])) for o in outs)
            if not torch.is_grad_enabled() or isinstance(bsym.output, (tuple, list)) or tensors[0].name in self._made_at:
                self._made_at.update((o.name, self._updates.get(memory, 0)) for o in outs)


def _raise_on_read(p: TensorProxy, versions: ViewVersions) -> None:
    chain = _view_chain(p)
    replayed = _replayed(chain, versions) if chain else None
    if replayed is None:
        return
    base, view = replayed
    try:
        with torch.enable_grad():
            # its memory was updated (with a value requiring grad where it requires grad since)
            base.add_(torch.zeros((), dtype=base.dtype, device="meta").requires_grad_(versions.requires_grad(p)))
            view.grad_fn  # noqa: B018 (made anew where the version moved: eager refuses here)
    except RuntimeError as e:
        raise RuntimeError(str(e)) from None


def _view_chain(a: TensorProxy) -> list:
    """The views ``a`` was made through, from ``a`` back to the tensor that owns the memory: (bound symbol, grad
    mode when it ran, its output that the next one reads)."""
    from thunder.core.trace import get_tracectx
    from thunder.transforms.functionalize import is_view

    trace = get_tracectx()
    made, grad_enabled = {}, trace.grad_enabled
    for b in trace.bound_symbols:
        if b.sym.id == "prims.set_grad_enabled":
            grad_enabled = bool(pyval(b.args[0]))
        elif "inplace" not in b.sym.tags:  # an in-place op's result is its target, made before
            made.update((o.name, (b, grad_enabled)) for o in b.flat_proxy_outs if isinstance(o, TensorProxy))
    chain = []
    while a.name in made and is_view(made[a.name][0]) and isinstance(made[a.name][0].args[0], TensorProxy):
        b, grad_enabled = made[a.name]
        chain.append((b, grad_enabled, a))
        a = b.args[0]
    return chain


def _replayed(chain: list, versions: ViewVersions | None) -> tuple | None:
    """(the base, the last view of ``chain``) made again on meta tensors, each view in its grad mode, from a base
    requiring grad where it did when the first view was made (None: not replayable)."""
    from thunder.transforms.layouts import _eager_call, torch_results

    owner = chain[-1][0].args[0]  # the tensor whose memory the views share
    first = chain[-1][2].name
    requires_grad = versions.source_required_grad.get(first, owner.requires_grad) if versions is not None \
        else owner.requires_grad
    t = torch.empty(tuple(int(pyval(d)) for d in owner.shape), dtype=dtypes.to_torch_dtype(owner.dtype), device="meta")
    with torch.enable_grad():
        t = base = t.requires_grad_().clone() if requires_grad else t  # not a leaf: that error is checked elsewhere
    for b, grad_enabled, out in reversed(chain):
        fn = _eager_call(b)
        if fn is None:
            return None
        try:
            with torch.set_grad_enabled(grad_enabled):
                args, kwargs = tree_map(_argument, (b.args[1:], b.kwargs))
                made = torch_results(fn(t, *args, **kwargs))
        except Exception:  # noqa: BLE001 (no meta kernel: not checked)
            return None
        names = [o.name for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
        if len(made) != len(names):
            return None
        t = made[names.index(out.name)]
    return base, t


def _argument(x):
    from thunder.transforms.layouts import torch_argument

    if isinstance(x, slice):  # indexing keys: their bounds may be symbolic numbers
        return slice(*(torch_argument(v) for v in (x.start, x.stop, x.step)))
    return torch_argument(x)
