"""Flattening of nested Python containers (tuples, lists, dicts, slices, namedtuples, structseqs, dataclasses).

Kept tiny and torch-free: traces and executors only ever need these container types.
"""

from __future__ import annotations

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "TreeSpec"]


class TreeSpec:
    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind, meta, children):
        self.kind, self.meta, self.children = kind, meta, children

    def __repr__(self) -> str:
        return f"TreeSpec({self.kind}, {self.meta}, {self.children})"


_LEAF = TreeSpec("leaf", None, ())


def tree_flatten(tree) -> tuple[list, TreeSpec]:
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(x, leaves: list) -> TreeSpec:
    t = type(x)
    if t is tuple or t is list or (isinstance(x, tuple) and hasattr(t, "printed_constructor")):
        # the last: tuples standing for another type (a symbolic torch.Size), rebuilt as themselves
        return TreeSpec(t, None, tuple(_flatten(v, leaves) for v in x))
    if t is dict:
        keys = tuple(x.keys())
        return TreeSpec(dict, keys, tuple(_flatten(x[k], leaves) for k in keys))
    if t is slice:  # a[:n] with a symbolic n: the bound is a value the trace computes
        return TreeSpec(slice, None, tuple(_flatten(v, leaves) for v in (x.start, x.stop, x.step)))
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
        return TreeSpec("namedtuple", t, tuple(_flatten(v, leaves) for v in x))
    if isinstance(x, tuple) and getattr(t, "n_fields", None) == getattr(t, "n_sequence_fields", -1):
        # a structseq (torch.return_types.max): rebuilt as itself, so a caller gets eager's type back
        return TreeSpec("structseq", t, tuple(_flatten(v, leaves) for v in x))
    fields = getattr(t, "__dataclass_fields__", None)
    if fields is not None and not isinstance(x, type):  # dataclass instances (e.g. transformers' ModelOutput)
        names = tuple(n for n, f in fields.items() if f.init)
        return TreeSpec("dataclass", (t, names), tuple(_flatten(getattr(x, n), leaves) for n in names))
    leaves.append(x)
    return _LEAF


def tree_unflatten(leaves, spec: TreeSpec):
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec: TreeSpec):
    if spec.kind == "leaf":
        return next(it)
    children = [_unflatten(it, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.meta, children))
    if spec.kind is slice:
        return slice(*children)
    if spec.kind == "namedtuple":
        return spec.meta(*children)
    if spec.kind == "structseq":
        return spec.meta(children)
    if spec.kind == "dataclass":
        tp, names = spec.meta
        return tp(**dict(zip(names, children)))
    return spec.kind(children)


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)
