"""Provenance: where an interpreted value came from, as a replayable access path."""

from __future__ import annotations

__all__ = ["Provenance"]

# Root kinds denote values that live outside the interpreted program.
OUTSIDE_ROOT_KINDS = frozenset({"fn", "arg", "kwarg", "global", "builtin", "closure_cell", "default"})
# Derived kinds keep the "outside" property of their parent.
DERIVED_KINDS = frozenset({"attr", "item", "key"})


class Provenance:
    """Immutable, hashable description of how to re-reach a value.

    ``kind`` is one of the root kinds ``fn``, ``arg``, ``kwarg``, ``global``, ``builtin``,
    ``closure_cell``, ``default`` (values entering from outside), the derived kinds ``attr``,
    ``item`` and ``key`` (``key``: the ``key``-th key in iteration order of the parent dict, or element of
    the parent set), or
    ``computed`` / ``constant`` (values made by the program itself).
    ``parent`` is the Provenance of the object the value was read from (derived kinds only),
    ``key`` the index / name / attribute, and ``root`` (roots only) the object needed to re-reach
    the value later: the globals dict (``global``), the builtins dict (``builtin``), the cell object
    (``closure_cell``) or the function object (``default``). Roots compare by identity of ``root``.
    """

    __slots__ = ("kind", "parent", "key", "root", "_hash")

    def __init__(self, kind: str, parent: Provenance | None = None, key: object = None, root: object = None):
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "parent", parent)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError("Provenance is immutable")

    # ----- constructors -------------------------------------------------------------------
    @staticmethod
    def fn() -> Provenance:
        """The callable passed to ``interpret`` itself."""
        return _FN

    @staticmethod
    def arg(index: int) -> Provenance:
        return Provenance("arg", None, index)

    @staticmethod
    def kwarg(name: str) -> Provenance:
        return Provenance("kwarg", None, name)

    @staticmethod
    def global_(globals_dict: dict, name: str) -> Provenance:
        """``globals_dict[name]``; ``globals_dict`` may also be a module (its ``__dict__`` is used)."""
        if not isinstance(globals_dict, dict):
            globals_dict = vars(globals_dict)
        return Provenance("global", None, name, globals_dict)

    @staticmethod
    def builtin(name: str, builtins_dict: dict | None = None) -> Provenance:
        if builtins_dict is None:
            import builtins

            builtins_dict = vars(builtins)
        return Provenance("builtin", None, name, builtins_dict)

    @staticmethod
    def closure_cell(fn_qualname: str, index: int, varname: str, cell: object = None) -> Provenance:
        """The contents of ``cell`` (free variable ``varname``, ``index`` into ``fn.__closure__``)."""
        return Provenance("closure_cell", None, (fn_qualname, index, varname), cell)

    @staticmethod
    def default(name: str, fn: object = None) -> Provenance:
        """The default value of parameter ``name`` of function ``fn``."""
        return Provenance("default", None, name, fn)

    @staticmethod
    def attr(parent: Provenance, name: str) -> Provenance:
        return Provenance("attr", parent, name)

    @staticmethod
    def item(parent: Provenance, key: object) -> Provenance:
        return Provenance("item", parent, key)

    @staticmethod
    def dict_key(parent: Provenance, index: int) -> Provenance:
        """The ``index``-th key of the parent dict (element of the parent set) in iteration order."""
        return Provenance("key", parent, index)

    @staticmethod
    def computed() -> Provenance:
        return _COMPUTED

    @staticmethod
    def constant() -> Provenance:
        return _CONSTANT

    # ----- queries ------------------------------------------------------------------------
    @property
    def is_outside(self) -> bool:
        """True iff the value is reached from an input root (arg, kwarg, global, ...)."""
        p = self
        while p.kind in DERIVED_KINDS:
            p = p.parent
        return p.kind in OUTSIDE_ROOT_KINDS

    def path(self) -> tuple:
        """Steps from the root, e.g. ``(("arg", 0), ("attr", "__dict__"), ("item", "w"))``.

        Root steps: ``("fn", None)``, ``("arg", i)``, ``("kwarg", name)``, ``("global", name)``,
        ``("builtin", name)``, ``("closure_cell", varname)``, ``("default", name)``,
        ``("computed", None)``, ``("constant", None)``. The objects needed by the root steps are on
        ``root_provenance().root``.
        """
        steps = []
        p = self
        while p.kind in DERIVED_KINDS:
            steps.append((p.kind, p.key))
            p = p.parent
        if p.kind == "closure_cell":
            steps.append(("closure_cell", p.key[2]))
        else:
            steps.append((p.kind, p.key))
        return tuple(reversed(steps))

    def root_provenance(self) -> Provenance:
        p = self
        while p.kind in DERIVED_KINDS:
            p = p.parent
        return p

    def replay(self, fn: object, args: tuple, kwargs: dict) -> object:
        """Re-evaluate the access path with plain Python against a call's ``fn, args, kwargs``."""
        root = self.root_provenance()
        if root.kind == "fn":
            value = fn
        elif root.kind == "arg":
            value = args[root.key]
        elif root.kind == "kwarg":
            value = kwargs[root.key]
        elif root.kind in ("global", "builtin"):
            value = root.root[root.key]
        elif root.kind == "closure_cell":
            value = root.root.cell_contents
        elif root.kind == "default":
            value = default_value(root.root, root.key)
        else:
            raise ValueError(f"cannot replay a {root.kind} provenance")
        for kind, key in self.path()[1:]:
            if kind == "attr":
                value = getattr(value, key)
            elif kind == "item":
                value = value[key]
            else:  # "key"
                value = list(value)[key]
        return value

    def to_source(self, fn_name: str = "fn", args_name: str = "args", kwargs_name: str = "kwargs") -> str:
        """A Python expression for this path. Roots that need an object (globals dict, cell,
        function) are written as ``<globals>``, ``<cell>``, ``<function>`` placeholders."""
        root = self.root_provenance()
        if root.kind == "fn":
            s = fn_name
        elif root.kind == "arg":
            s = f"{args_name}[{root.key!r}]"
        elif root.kind == "kwarg":
            s = f"{kwargs_name}[{root.key!r}]"
        elif root.kind == "global":
            s = f"<globals of {root.root.get('__name__', '?')}>[{root.key!r}]"
        elif root.kind == "builtin":
            s = f"builtins.{root.key}"
        elif root.kind == "closure_cell":
            s = f"<cell {root.key[0]}.{root.key[2]}>.cell_contents"
        elif root.kind == "default":
            s = f"<default {getattr(root.root, '__qualname__', '?')}({root.key})>"
        else:
            return f"<{root.kind}>"
        for kind, key in self.path()[1:]:
            if kind == "attr":
                s = f"{s}.{key}" if str(key).isidentifier() else f"getattr({s}, {key!r})"
            elif kind == "item":
                s = f"{s}[{key!r}]"
            else:
                s = f"list({s})[{key!r}]"
        return s

    # ----- value semantics ----------------------------------------------------------------
    def _identity(self):
        return (self.kind, self.parent, _hashable_key(self.key), id(self.root) if self.root is not None else None)

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, Provenance):
            return NotImplemented
        return self._identity() == other._identity() and self.root is other.root

    def __hash__(self):
        h = self._hash
        if h is None:
            h = hash(self._identity())
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self):
        if self.kind in ("computed", "constant"):
            return f"Provenance.{self.kind}()"
        return f"Provenance({self.to_source()})"


def _hashable_key(key):
    try:
        hash(key)
        return key
    except TypeError:
        return ("<unhashable>", id(key))


def default_value(fn, name):
    """The current default of parameter ``name`` of ``fn`` (positional or keyword-only)."""
    kwdefaults = fn.__kwdefaults__ or {}
    if name in kwdefaults:
        return kwdefaults[name]
    code = fn.__code__
    positional = code.co_varnames[: code.co_argcount]
    defaults = fn.__defaults__ or ()
    return defaults[positional.index(name) - (len(positional) - len(defaults))]


_FN = Provenance("fn")
_COMPUTED = Provenance("computed")
_CONSTANT = Provenance("constant")
