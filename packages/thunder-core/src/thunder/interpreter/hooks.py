"""Hooks: how the jit customises interpretation. The defaults make interpret() behave like a call."""

from __future__ import annotations

from typing import Callable

__all__ = ["Hooks"]


class Hooks:
    """Customisation points consulted by the interpreter (subclass and override)."""

    def wrapped_lookaside(self, fn) -> Callable | None:
        """Replacement receiving WrappedValue args/kwargs and returning a WrappedValue, or None.

        Consulted first for every call the interpreted program makes. The replacement may call
        back into the interpreter with ``call_wrapped``.
        """
        return None

    def interpreted_instead(self, fn) -> str | None:
        """The name of an attribute of ``fn`` holding the callable the program runs in its place (a compiler's
        wrapper around the user's function: what it wraps is interpreted, reached from ``fn``), or None."""
        return None

    def lookaside(self, fn) -> Callable | None:
        """Replacement called natively with unwrapped args instead of ``fn``, or None.

        Its result gets ``Provenance.computed()``.
        """
        return None

    def should_interpret(self, fn) -> bool:
        """For Python functions only: True interprets the bytecode, False calls natively."""
        return True

    def on_input(self, value, provenance):
        """Called when a value enters the program from outside; returns the value to use.

        Returning a different object makes that object a computed value from then on.
        """
        return value

    def attribute_value(self, obj, name: str, value):
        """What the program sees when it reads attribute ``name`` of ``obj`` natively (``value``, the result
        of the real lookup). A jit hands user code eager's types for the metadata a proxy carries
        (``x.shape`` as a ``torch.Size``). Default: ``value``."""
        return value

    def set_attribute(self, obj, name: str, value) -> None:
        """Set attribute ``name`` of ``obj``, an object the program made (not an outside one, see ``on_store``)
        with no ``__setattr__`` or descriptor of its own for it. A jit refuses what its stand-ins (proxies) have
        no place for. Default: ``setattr``."""
        setattr(obj, name, value)

    def is_outside_class(self, cls) -> bool:
        """Whether ``cls`` is the caller's, so what attribute lookup finds on it is outside state (a jit's own
        stand-in classes are not). Default: True."""
        return True

    def dict_key(self, key):
        """The key to use for a dict or set lookup with ``key`` (a jit maps a proxy back to the object it stands
        for, so ``state[param]`` finds the entry of the real parameter). Default: ``key``."""
        return key

    def on_membership(self, wcontainer, key, present: bool, wkey=None) -> None:
        """The program learned whether ``key`` is in an outside dict, set, list or tuple (``in``,
        ``dict.get``). ``wkey``: the wrapped key, when the program supplied it (an outside key may differ on
        the next call). Default: nothing."""

    def on_length(self, wcontainer) -> None:
        """The program relied on how many entries an outside dict or set has (``len``, iterating it to the
        end, ``{**d}``). Default: nothing."""

    def keys_are_inputs(self, wcontainer) -> bool:
        """The program starts iterating an outside dict or set: True makes its ``i``-th key an input (provenance
        ``key``); False iterates it as a computed container (the hook checks what the keys were its own way, e.g.
        when the program changed the container before). Default: True."""
        return True

    def on_missing_attribute(self, wobj, name: str) -> None:
        """Reading attribute ``name`` of an outside object raised AttributeError (``getattr(o, name, default)``,
        ``hasattr``, ``try: o.name``): the program relied on its absence. Default: nothing."""

    def on_identity(self, wleft, wright) -> None:
        """The program compared two objects by identity (``a is b``, neither of them None, True or False): the
        answer depends on which objects outside operands are, not only on their types. Default: nothing."""

    def on_catching_code(self, code) -> None:
        """A frame of ``code``, which has an exception handler (``try``, ``with``), runs: the program may catch an
        error that an operation raises only when it runs. Default: nothing."""

    def on_native_call(self, fn, wargs, wkwargs) -> None:
        """Called before ``fn`` runs natively (not interpreted) with these WrappedValue arguments: the
        native code may read state of outside objects that no provenance records. Default: nothing."""

    def on_store(self, kind: str, target, key, value) -> None:
        """Called instead of a write to outside state; the default performs the write.

        ``kind``: "global", "delete_global", "cell", "delete_cell", "attr", "delete_attr",
        "item", "delete_item". ``target``: the WrappedValue of the written object (None for
        globals; for cells the cell object with the cell's closure_cell provenance). ``key``: the
        global / variable / attribute name or the (unwrapped) item key. ``value``: the
        WrappedValue written (None for deletions).
        """
        from .runtime import perform_store

        perform_store(kind, target, key, value)
