"""Re-reaching outside values by their provenance, inside a prologue or epilogue trace being built:
``args[0].__dict__['_modules']['fc1']``, ``globals_of_mymodule['W']``, ``cell_x.cell_contents``."""

from __future__ import annotations

import keyword
import re
import types

from thunder.core import prims
from thunder.core.codegen import ObjectRef
from thunder.core.prims import AnyProxy
from thunder.interpreter import Provenance
from thunder.interpreter.typeutil import lookup_type

__all__ = ["PathReacher"]


class PathReacher:
    """Emits unpack prims into the current trace; each path is read once per trace."""

    def __init__(self, trace, fn, args_p: AnyProxy, kwargs_p: AnyProxy):
        self.trace, self.fn, self.args_p, self.kwargs_p = trace, fn, args_p, kwargs_p
        self.reached: dict[Provenance, object] = {}
        self._refs: dict[int, ObjectRef] = {}
        self._class_dicts: dict[Provenance, object] = {}  # a class's __dict__, read once

    def ref(self, obj, base: str) -> ObjectRef:
        """A named reference to an object the trace needs as is (a globals dict, a cell, a function)."""
        r = self._refs.get(id(obj))
        if r is None:
            name = re.sub(r"\W+", "_", base).strip("_") or "obj"
            if keyword.iskeyword(name) or name[0].isdigit():
                name = f"ref_{name}"  # e.g. a lambda's name
            r = self._refs[id(obj)] = ObjectRef(obj, self.trace.make_unique_name(name))
        return r

    def reach(self, prov: Provenance, out=None):
        """The value at ``prov``; ``out``, when given, is the proxy the final unpack must produce."""
        if prov in self.reached:
            return self.reached[prov]
        kind = prov.kind
        if kind == "fn":
            value = self.ref(self.fn, "fn")
            self.reached[prov] = value
            return value
        if kind == "arg":
            value = prims.unpack_item(self.args_p, prov.key)
        elif kind == "kwarg":
            value = prims.unpack_item(self.kwargs_p, prov.key)
        elif kind == "global":
            value = prims.unpack_item(self.ref(prov.root, f"globals_{prov.root.get('__name__', 'module')}"), prov.key)
        elif kind == "globals":
            value = self.ref(prov.root, f"globals_{prov.root.get('__name__', 'module')}")
        elif kind == "class":
            value = self.ref(prov.root, prov.root.__name__)
        elif kind == "lookup":
            # the entry under that name along the class's MRO (a method, a property), before descriptors run
            name, after = (prov.key, None) if type(prov.key) is str else prov.key
            cls = prov.parent.root
            if after is None and type(lookup_type(cls, name)) is types.FunctionType and name.isidentifier():
                # ``C.name`` gives a function found along the MRO as it is (at C speed, through the type's
                # attribute cache); a data descriptor of the metaclass would give something else, a miss
                value = prims.unpack_attr(self.reach(prov.parent), name)
            elif after is None and name in cls.__dict__:  # the class's own: one dict read, whatever the MRO
                value = prims.unpack_item(self._class_dict(prov.parent), name)
            else:
                after = None if after is None else self.ref(after, after.__name__)
                value = prims.unpack_lookup(self.reach(prov.parent), name, after)
        elif kind == "builtin":
            value = prims.unpack_item(self.ref(prov.root, "builtins"), prov.key)
        elif kind == "closure_cell":
            value = prims.unpack_cell(self.ref(prov.root, f"cell_{prov.key[2]}"))
        elif kind == "default":
            value = self._default(prov)
        elif kind == "attr":
            value = prims.unpack_attr(self.reach(prov.parent), prov.key)
        elif kind == "item":
            value = prims.unpack_item(self.reach(prov.parent), prov.key)
        elif kind == "type":
            value = prims.unpack_type(self.reach(prov.parent))
        elif kind == "deref":
            value = prims.unpack_deref(self.reach(prov.parent))
        elif kind == "key":
            value = prims.unpack_item(self.keys(prov.parent), prov.key)
        else:
            raise NotImplementedError(f"cannot re-reach a value with provenance {prov!r}")
        if out is not None:
            # The last unpack of a computation input produces the computation's own proxy.
            scope = self.trace.scopes[-1]
            scope[-1] = scope[-1].replace(output=out)
            value = out
        self.reached[prov] = value
        return value

    def _class_dict(self, class_prov: Provenance):
        d = self._class_dicts.get(class_prov)
        if d is None:
            d = self._class_dicts[class_prov] = prims.unpack_attr(self.reach(class_prov), "__dict__")
        return d

    def keys(self, dict_prov: Provenance):
        """The keys of a dict in iteration order, read once per trace (the ``i``-th key is ``keys[i]``)."""
        keys_prov = Provenance.attr(dict_prov, "<keys>")  # a private step: no user path has this name
        keys = self.reached.get(keys_prov)
        if keys is None:
            keys = self.reached[keys_prov] = prims.unpack_keys(self.reach(dict_prov))
        return keys

    def forget(self, prov: Provenance) -> None:
        """Drops what was reached through ``prov`` (after a write there, reads must happen anew)."""
        for reached in list(self.reached):
            p = reached
            while p is not None:
                if p == prov:
                    del self.reached[reached]
                    break
                p = p.parent

    def _default(self, prov: Provenance):
        fn = prov.root
        f = self.ref(fn, "fn")
        if prov.key in (fn.__kwdefaults__ or {}):
            return prims.unpack_item(prims.unpack_attr(f, "__kwdefaults__"), prov.key)
        code = fn.__code__
        positional = code.co_varnames[: code.co_argcount]
        index = positional.index(prov.key) - (len(positional) - len(fn.__defaults__))
        return prims.unpack_item(prims.unpack_attr(f, "__defaults__"), index)
