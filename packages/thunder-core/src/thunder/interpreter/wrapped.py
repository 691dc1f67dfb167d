"""WrappedValue: a value on the interpreter's stack or in its locals, paired with its provenance."""

from __future__ import annotations

from .provenance import Provenance

__all__ = ["WrappedValue", "computed", "constant", "unwrap_all"]


class WrappedValue:
    """A value plus its :class:`Provenance`.

    ``bound_self``: for bound methods, the WrappedValue of the receiver (so ``self`` keeps its
    provenance when the method is called). ``items``: element wrappers for containers built by the
    interpreter (tuple/list of WrappedValue, dict key -> WrappedValue) or a ``ViewSource`` for dict
    views; used only when the element read back is identical to the recorded one.
    """

    __slots__ = ("value", "provenance", "bound_self", "items")

    def __init__(self, value, provenance: Provenance, bound_self=None, items=None):
        self.value = value
        self.provenance = provenance
        self.bound_self = bound_self
        self.items = items

    def __repr__(self):
        return f"WrappedValue({self.value!r}, {self.provenance!r})"


def computed(value, items=None) -> WrappedValue:
    return WrappedValue(value, Provenance.computed(), None, items)


def constant(value) -> WrappedValue:
    return WrappedValue(value, Provenance.constant())


def unwrap_all(wrapped_args, wrapped_kwargs):
    return [w.value for w in wrapped_args], {k: w.value for k, w in wrapped_kwargs.items()}
