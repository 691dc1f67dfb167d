"""Writes to outside state while tracing: done for real (so the rest of the program reads what CPython
would), undone when tracing ends, and recorded so the epilogue replays them on every call.

A write is (kind, target provenance, key, value): stores to globals, closure cells, attributes and
items of outside objects, their deletions, and calls of mutating methods of outside lists, dicts and
sets (``lst.append(x)``).
"""

from __future__ import annotations

import sys
import warnings

from thunder.core.errors import UnsupportedError
from thunder.interpreter import Provenance

__all__ = ["Write", "SideEffects", "MUTATING_METHODS", "READING_MUTATIONS", "CHANGING_METHODS"]

_MISSING = object()

# Methods that change a container in place and return None: replaying them is exactly CPython's effect.
# The in-place operator dunders (``lst += more``) return the container itself, which the program stores back.
MUTATING_METHODS = {
    list: ("append", "extend", "insert", "remove", "clear", "reverse", "__iadd__", "__imul__"),
    dict: ("update", "clear", "__ior__"),
    set: ("add", "discard", "update", "clear", "difference_update", "intersection_update", "symmetric_difference_update",
          "__ior__", "__iand__", "__isub__", "__ixor__"),
}
# Methods that mutate and return a value read from the container: the jit reads that value as an outside value
# (checked by the prologue), then records the call (frontend/hooks.py).
READING_MUTATIONS = {list: ("pop",), dict: ("pop", "setdefault")}
# Methods whose effect or result depends on contents the prologue does not check: refused.
_VALUE_RETURNING = {list: ("sort",), dict: ("popitem",), set: ("pop", "remove")}
# every method above, by type: those the jit replays, reads first or refuses
CHANGING_METHODS = {tp: frozenset((*names, *READING_MUTATIONS.get(tp, ()), *_VALUE_RETURNING.get(tp, ())))
                    for tp, names in MUTATING_METHODS.items()}


class Write:
    __slots__ = ("kind", "target", "key", "value", "location", "location_provenance")

    def __init__(self, kind: str, target: Provenance | None, key, value, location, location_provenance):
        # kind: "global", "delete_global", "cell", "delete_cell", "attr", "delete_attr", "item", "delete_item",
        # "call" (key = method name, value = tuple of arguments), "call_function" (key = the function, value =
        # (args, kwargs), no target); target: provenance of the written object
        # (for globals, the globals dict's own root); value: the plain value written.
        self.kind, self.target, self.key, self.value, self.location = kind, target, key, value, location
        self.location_provenance = location_provenance  # the place written: reads through it are stale after


class SideEffects:
    def __init__(self):
        self.writes: list[Write] = []
        self.written: set = set()  # provenances of locations written: later reads are not prologue inputs
        self._written_attrs: set = set()  # (id(object), name) of attributes written, whatever the path
        # location written -> where the outside object stored there came from (``o.e = o.d``): reads through the
        # location are reads of that object, checked by the prologue like any outside value
        self.stored_from: dict = {}
        self._undo: list = []
        self._snapshotted: dict[int, object] = {}  # id -> a copy of the contents before the first change

    # recording ------------------------------------------------------------------------------------
    def store(self, kind: str, target, key, value, globals_dict, location) -> None:
        """Performs the write for real and records it. ``target`` is the interpreter's WrappedValue."""
        plain = value.value if value is not None else None
        also_written = ()  # other paths reads reach the stored value by
        if value is not None and self._stores_back(kind, target, key, value, globals_dict):
            return  # ``o.d = getattr(o, "d", {})`` when o.d exists: the object already there, nothing changes
        if kind in ("global", "delete_global"):
            old = globals_dict.get(key, _MISSING)
            self._undo.append(lambda: _restore_item(globals_dict, key, old))
            if kind == "global":
                globals_dict[key] = plain
            else:
                del globals_dict[key]
            location_prov = Provenance.global_(globals_dict, key)
            target_prov = location_prov
        elif kind in ("cell", "delete_cell"):
            cell = target.value
            try:
                old = cell.cell_contents
            except ValueError:
                old = _MISSING
            self._undo.append(lambda: _restore_cell(cell, old))
            if kind == "cell":
                cell.cell_contents = plain
            else:
                del cell.cell_contents
            location_prov = target_prov = target.provenance
        elif kind in ("attr", "delete_attr"):
            obj = target.value
            old = getattr(obj, key, _MISSING)  # through the normal protocol: a module keeps buffers in _buffers
            self._undo.append(lambda: _restore_attr(obj, key, old))
            if kind == "attr":
                setattr(obj, key, plain)
            else:
                delattr(obj, key)
            self._written_attrs.add((id(obj), key))
            target_prov, location_prov = target.provenance, Provenance.attr(target.provenance, key)
            also_written = _kept_in_instance_dicts(obj, target_prov, key, plain) if kind == "attr" else ()
        elif kind in ("item", "delete_item"):
            obj = target.value
            self.snapshot(obj)
            if kind == "item":
                obj[key] = plain
            else:
                del obj[key]
            target_prov, location_prov = target.provenance, Provenance.item(target.provenance, key)
        else:
            raise ValueError(f"unknown store kind {kind!r}")
        from_outside = value is not None and value.provenance.is_outside and not self.is_written(value.provenance)
        for where in (location_prov, *also_written):
            self.written.add(where)
            if from_outside:
                self.stored_from[where] = value.provenance
            else:
                self.stored_from.pop(where, None)
        self.writes.append(Write(kind, target_prov, key, plain, location, location_prov))

    def _stores_back(self, kind, target, key, value, globals_dict) -> bool:
        """Whether the write stores an outside object back where it was read from, where it still is."""
        if kind == "global":
            location, current = Provenance.global_(globals_dict, key), globals_dict.get(key, _MISSING)
        elif kind == "attr":
            location, current = Provenance.attr(target.provenance, key), getattr(target.value, key, _MISSING)
        else:
            return False
        return value.provenance == location and current is value.value and not self.is_written(location)

    def rebased(self, provenance: Provenance) -> Provenance | None:
        """A read through a written location holding an outside object (``o.e = o.d; o.e["k"]``): the same read
        from where that object came from (``o.d["k"]``), or None when the value read is the program's own."""
        steps = []
        p = provenance
        while p is not None:
            if p in self.written:
                source = self.stored_from.get(p)
                if source is None:
                    return None
                for kind, key in reversed(steps):
                    source = Provenance(kind, source, key)
                return None if self.is_written(source) else source
            steps.append((p.kind, p.key))
            p = p.parent
        return None

    def call_method(self, obj, provenance: Provenance, name: str, args: tuple, location):
        """``obj.name(*args)`` on an outside container: done now, replayed by the epilogue."""
        self.snapshot(obj)
        result = getattr(obj, name)(*args)
        self.written.add(provenance)  # its contents are no longer what the prologue saw
        self.writes.append(Write("call", provenance, name, args, location, None))
        return result

    def call_later(self, provenance: Provenance, name: str, args: tuple, location) -> None:
        """``obj.name(*args)`` on an outside object whose effect the trace models itself (``x.t_()`` of an input
        tensor): not done now, done by the epilogue on every call."""
        self.writes.append(Write("call", provenance, name, args, location, None))

    def call_function(self, fn, args: tuple, kwargs: dict, location) -> None:
        """``fn(*args, **kwargs)`` whose only effect is on the outside world (``print``): not done now, done by the
        epilogue on every call, in program order with the writes."""
        self.writes.append(Write("call_function", None, fn, (args, kwargs), location, None))

    def snapshot(self, obj) -> None:
        if id(obj) in self._snapshotted:
            return
        saved = type(obj)(obj) if type(obj) is not list else list(obj)
        self._snapshotted[id(obj)] = saved
        self._undo.append(lambda: _restore_contents(obj, saved))

    def wrote_attr(self, obj, name: str) -> bool:
        """Whether the program set or deleted attribute ``name`` of ``obj`` (a class it patched, say)."""
        return (id(obj), name) in self._written_attrs

    def original(self, obj):
        """A copy of an outside container as it was before the program changed it, or None if it did not."""
        return self._snapshotted.get(id(obj))

    def is_written(self, provenance: Provenance) -> bool:
        p = provenance
        while p is not None:
            if p in self.written:
                return True
            p = p.parent
        return False

    # after tracing ----------------------------------------------------------------------------------
    def undo(self) -> None:
        """Puts the outside world back as it was before tracing (the epilogue will do the writes)."""
        while self._undo:
            self._undo.pop()()


def warn_at(message: str, category: type, filename: str, lineno: int, module: str) -> None:
    """``warnings.warn`` as the program's line called it, replayed by the epilogue on every call: the filters are
    asked then, and the module's registry remembers what was shown once, as for the line itself in eager."""
    module_globals = getattr(sys.modules.get(module), "__dict__", None)
    registry = module_globals.setdefault("__warningregistry__", {}) if module_globals is not None else None
    # no module_globals: with them, warn_explicit reads the module's source through its loader on every call (25 us,
    # even where the filters ignore the warning), which warnings.warn never does (linecache reads the line when shown)
    warnings.warn_explicit(message, category, filename, lineno, module, registry)


def _kept_in_instance_dicts(obj, target_prov: Provenance, key, value) -> list:
    """Where a class's own ``__setattr__`` put the value besides the attribute itself: ``module.state = t`` puts a
    buffer in ``module.__dict__['_buffers']['state']``, the path its ``__getattr__`` reads it back by."""
    if type(obj).__setattr__ is object.__setattr__:
        return []
    instance_dict = Provenance.attr(target_prov, "__dict__")
    return [Provenance.item(Provenance.item(instance_dict, name), key)
            for name, d in getattr(obj, "__dict__", {}).items() if type(d) is dict and d.get(key, _MISSING) is value]


def refuse_value_returning_mutation(tp, name: str, where: str):
    if name in _VALUE_RETURNING.get(tp, ()):
        raise UnsupportedError(
            f"{tp.__name__}.{name}() on a {tp.__name__} from outside the jitted function{where} mutates it and returns "
            "a value that depends on its contents, which thunder.jit does not replay yet; copy it first or call the "
            "function without thunder.jit"
        )


def _restore_item(d, key, old):
    if old is _MISSING:
        d.pop(key, None)
    else:
        d[key] = old


def _restore_cell(cell, old):
    if old is _MISSING:
        try:
            del cell.cell_contents
        except ValueError:
            pass
    else:
        cell.cell_contents = old


def _restore_attr(obj, key, old):
    if old is _MISSING:
        try:
            delattr(obj, key)
        except AttributeError:
            pass
    else:
        setattr(obj, key, old)


def _restore_contents(obj, saved):
    if type(obj) is list:
        obj[:] = saved
    else:
        obj.clear()
        obj.update(saved)
