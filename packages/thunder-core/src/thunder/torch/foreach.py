"""``torch._foreach_*``: the list forms optimizers use, as the per-tensor operation on each element.

``torch._foreach_add_(xs, ys, alpha=a)`` is ``x.add_(y, alpha=a)`` for each pair; an argument that is a list
(or tuple) supplies one element per tensor, anything else is shared. In-place forms update each tensor and
return None, as PyTorch does.
"""

from __future__ import annotations

import torch

from thunder.torch.inplace import update
from thunder.torch.registry import language_symbols, register_method

__all__ = ["FOREACH"]


def _element(arg, i):
    return arg[i] if isinstance(arg, (list, tuple)) else arg


def _foreach(op_name: str, in_place: bool):
    def impl(tensors, *args, **kwargs):
        op = language_symbols[op_name]
        if op_name in ("addcmul", "addcdiv") and len(args) == 3:  # the foreach forms take value positionally
            *args, kwargs["value"] = args
        results = [op(t, *[_element(a, i) for a in args], **{k: _element(v, i) for k, v in kwargs.items()})
                   for i, t in enumerate(tensors)]
        if not in_place:
            return results
        for t, r in zip(tensors, results):
            update(t, r)
        return None

    impl.__name__ = f"_foreach_{op_name}{'_' if in_place else ''}"
    return impl


FOREACH: dict[str, object] = {}
for _name in dir(torch):
    if not _name.startswith("_foreach_"):
        continue
    _in_place = _name.endswith("_")
    _op = _name[len("_foreach_"):].rstrip("_")
    if _op in language_symbols:
        FOREACH[_name] = _foreach(_op, _in_place)
        register_method(f"__thunder{_name}", FOREACH[_name], getattr(torch, _name))


def group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """PyTorch's grouping for foreach kernels, on proxies: {(device, dtype): ([per-list tensors], [indices])}."""
    from thunder.core import dtypes
    from thunder.core.devices import to_torch_device

    groups: dict = {}
    for i, t in enumerate(tensorlistlist[0]):
        key = (to_torch_device(t.device), dtypes.to_torch_dtype(t.dtype))
        lists, indices = groups.setdefault(key, ([[] for _ in tensorlistlist], []))
        for lst, source in zip(lists, tensorlistlist):
            if source:  # an empty list (unused optimizer state) stays empty, as in PyTorch
                lst.append(source[i])
        indices.append(i)
    return groups


register_method("__thunder_group_tensors_by_device_and_dtype", group_tensors_by_device_and_dtype,
                torch._C._group_tensors_by_device_and_dtype)
