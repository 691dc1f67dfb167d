"""Provenance: where an interpreted value came from, as a replayable access path."""

from __future__ import annotations

__all__ = ["Provenance"]

# Root kinds denote values that live outside the interpreted program.
OUTSIDE_ROOT_KINDS = frozenset({"fn", "arg", "kwarg", "global", "builtin", "closure_cell", "default", "globals",
                                "class"})
# Derived kinds keep the "outside" property of their parent.
DERIVED_KINDS = frozenset({"attr", "item", "key", "type", "lookup", "deref"})


class Provenance:
    """Immutable, hashable description of how to re-reach a value.

    ``kind`` is one of the root kinds ``fn``, ``arg``, ``kwarg``, ``global``, ``builtin``,
    ``closure_cell``, ``default``, ``globals`` (a function's globals dict itself), ``class`` (a class
    the program looked attributes up on) (values entering from outside), the derived kinds ``attr``,
    ``item``, ``key`` (``key``: the ``key``-th key in iteration order of the parent dict, or element of
    the parent set), ``type`` (``type(parent)``) and ``lookup`` (what the parent class's MRO holds under a
    name, before any descriptor runs: ``key`` is the name, or ``(name, cls)`` for a ``super(cls, ...)``
    lookup that starts after ``cls``), or ``computed`` / ``constant`` (values made by the program itself).
    ``parent`` is the Provenance of the object the value was read from (derived kinds only),
    ``key`` the index / name / attribute, and ``root`` (roots only) the object needed to re-reach
    the value later: the globals dict (``global``, ``globals``), the builtins dict (``builtin``), the
    cell object (``closure_cell``), the function object (``default``) or the class (``class``).
    Roots compare by identity of ``root``.
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
    def globals_dict(globals_dict: dict) -> Provenance:
        """The globals dict of a function itself (its keys decide whether a name is a global or a builtin)."""
        return Provenance("globals", None, globals_dict.get("__name__"), globals_dict)

    @staticmethod
    def class_(cls: type) -> Provenance:
        """A class whose attributes (methods, properties, class attributes) the program looked up."""
        return Provenance("class", None, cls.__qualname__, cls)

    @staticmethod
    def type_of(parent: Provenance) -> Provenance:
        """``type(parent)``."""
        return Provenance("type", parent)

    @staticmethod
    def lookup(parent: Provenance, name: str, after: type | None = None) -> Provenance:
        """The entry ``name`` along the MRO of the parent class (``after``: the MRO after that class, as
        ``super(after, ...)`` searches), before any descriptor runs."""
        return Provenance("lookup", parent, name if after is None else (name, after))

    @staticmethod
    def deref(parent: Provenance) -> Provenance:
        """What the parent weak reference refers to (``parent()``)."""
        return Provenance("deref", parent)

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
        elif root.kind in ("globals", "class"):
            value = root.root
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
            elif kind == "type":
                value = type(value)
            elif kind == "lookup":
                value = class_lookup(value, key)
            elif kind == "deref":
                value = value()
            else:  # "key"
                value = tuple(value)[key]
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
        elif root.kind == "globals":
            s = f"<globals of {root.key or '?'}>"
        elif root.kind == "class":
            s = f"<class {root.key}>"
        else:
            return f"<{root.kind}>"
        for kind, key in self.path()[1:]:
            if kind == "attr":
                s = f"{s}.{key}" if str(key).isidentifier() else f"getattr({s}, {key!r})"
            elif kind == "item":
                s = f"{s}[{key!r}]"
            elif kind == "type":
                s = f"type({s})"
            elif kind == "lookup":
                s = (f"lookup_type({s}, {key!r})" if type(key) is str
                     else f"lookup_type({s}, {key[0]!r}, after={key[1].__qualname__})")
            elif kind == "deref":
                s = f"{s}()"
            else:
                s = f"tuple({s})[{key!r}]"
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


def class_lookup(cls, key):
    """The value of a ``lookup`` step (``typeutil.NOTFOUND`` when absent): ``key`` is a name, or
    ``(name, after)`` for a super() lookup."""
    from .typeutil import lookup_type

    return lookup_type(cls, key) if type(key) is str else lookup_type(cls, key[0], after=key[1])


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
