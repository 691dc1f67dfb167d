"""Executors: what runs the operations of a trace.

An :class:`OperatorExecutor` claims individual bound symbols it implements (and whose checker accepts
the arguments); a :class:`FusionExecutor` additionally groups the symbols it claims into regions in
its ``fusion_pass``. Implementations live in a table keyed by symbol id. Executors are provided by
plugins (see :mod:`thunder.plugins.hookspecs`); the built-in torch and python executors too.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy
from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.core.symbol import BoundSymbol, Symbol, tagged_symbol

__all__ = [
    "Executor", "OperatorExecutor", "FusionExecutor", "ImplInfo", "register_executor", "add_default_executor",
    "remove_default_executor", "get_executor", "get_default_executors", "get_all_executors",
    "set_default_executors", "resolve_executors", "lower_keeping_tags", "ClaimingFusionExecutor", "fuse_regions",
]


class ImplInfo:
    """How an executor implements one symbol.

    ``symbol``: an executor symbol to bind with the same (translated) arguments, or
    ``execution_transform``: a function traced with the original arguments whose recorded executor
    symbols replace the bound symbol. ``checker`` returns whether this implementation accepts the
    arguments (e.g. only some dtypes).
    """

    __slots__ = ("symbol", "checker", "execution_transform")

    def __init__(self, symbol: Symbol | None = None, *, checker=None, execution_transform=None):
        if (symbol is None) == (execution_transform is None):
            raise ValueError("give exactly one of symbol and execution_transform")
        self.symbol, self.checker, self.execution_transform = symbol, checker, execution_transform


class Executor:
    kind = "executor"

    def __init__(self, name: str, *, priority: int = 0, version: str | None = None, default: bool = True):
        self.name, self.priority, self.version = name, priority, version
        self.default = default  # False: opt-in, never among the default executors unless added by name
        self.implmap: dict[str, ImplInfo] = {}
        self.grad_rules: dict = {}  # symbol id -> (gradient rule, checker) used when this executor runs the symbol

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    # availability --------------------------------------------------------------------------------
    def availability(self) -> tuple[bool, str]:
        """(available, reason). Subclasses whose runtime may be missing (no GPU, library not installed)
        override this; it must never raise."""
        return True, ""

    def is_available(self) -> bool:
        return self.availability()[0]

    # implementations -----------------------------------------------------------------------------
    def register_operator(self, path: str, fn=None, *, call_ctx: bool = False) -> Symbol:
        """An executor symbol printed as ``path(...)`` (e.g. ``"torch.nn.functional.gelu"``).

        ``path`` must be importable (``module.attr.attr``) so printed traces run as they read; pass
        ``call_ctx=True`` with ``fn`` for a callable that cannot be imported.
        """
        if call_ctx:
            name = path.replace(".", "_")
            return Symbol(name, id=f"{self.name}.{path}", is_prim=True, executor=self, call_ctx={name: fn})
        module, name = _split_importable(path)
        return Symbol(name, id=f"{self.name}.{path}", is_prim=True, module=module, executor=self)

    def register_implementation(self, sym: Symbol | str, op: Symbol | None = None, *, checker=None,
                                execution_transform=None) -> None:
        sym_id = sym if isinstance(sym, str) else sym.id
        self.implmap[sym_id] = ImplInfo(op, checker=checker, execution_transform=execution_transform)

    def register_grad_rule(self, sym: Symbol | str, rule, *, checker=None) -> None:
        """A gradient rule (see :mod:`thunder.grad`) for a symbol this executor claims: used instead of the
        built-in rule when this executor is the one that runs the bound symbol (the first in the executor list
        that can) and ``checker`` (called with the bound symbol's arguments, like an implementation's) accepts
        them (e.g. a fused attention backward for the shapes its kernel supports)."""
        self.grad_rules[sym if isinstance(sym, str) else sym.id] = (rule, checker)

    def grad_rule(self, bsym: BoundSymbol):
        """This executor's gradient rule for ``bsym``, or None (no rule, or its checker refuses the arguments)."""
        rule, checker = self.grad_rules.get(bsym.sym.id, (None, None))
        if rule is None or (checker is not None and not checker(*bsym.args, **bsym.kwargs)):
            return None
        return rule

    def register_copy_lowering(self, *, copy_to_out: Symbol, copy: Symbol | None = None) -> None:
        """How this executor performs ``prims.copy_to_out_`` (and ``prims.copy_``): see the
        ``thunder_register_copy_lowering`` hook."""
        self.register_implementation("prims.copy_to_out_", copy_to_out)
        if copy is not None:
            self.register_implementation("prims.copy_", copy)

    def implements(self, sym: Symbol) -> bool:
        return sym.id in self.implmap

    def can_execute(self, bsym: BoundSymbol) -> bool:
        impl = self.implmap.get(bsym.sym.id)
        if impl is None:
            return False
        return impl.checker is None or bool(impl.checker(*bsym.args, **bsym.kwargs))

    def why_not(self, bsym: BoundSymbol) -> str | None:
        """Why this executor does not run ``bsym`` (None: it does), as ``thunder.examine.claims`` reports it.
        Executors whose checkers have reasons override it to say them."""
        if self.can_execute(bsym):
            return None
        if bsym.sym.id not in self.implmap:
            return f"{self.name} has no implementation of {bsym.sym.id}"
        return f"{self.name}'s checker refuses these arguments"

    def after_dispatch(self, trace):
        """A chance to rewrite the trace once every symbol has an executor (e.g. lower copies into the op
        that computed them). Returns a trace; the default returns it unchanged."""
        return trace

    def translate_args(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Arguments as the executor's symbols take them (e.g. thunder dtypes -> torch dtypes)."""
        return args, kwargs

    def lower(self, bsym: BoundSymbol) -> list[BoundSymbol]:
        """The executor-level bound symbols that compute ``bsym``'s outputs (callers lower through
        :func:`lower_keeping_tags`, which carries the side-effect, randomness and data-checked tags)."""
        impl = self.implmap[bsym.sym.id]
        if impl.symbol is not None:
            args, kwargs = self.translate_args(bsym.args, bsym.kwargs)
            # a symbol that is its own implementation keeps what it carries for readers (an island's call)
            subsymbols = bsym.subsymbols if impl.symbol is bsym.sym else ()
            return [BoundSymbol(impl.symbol, args, kwargs, bsym.output, subsymbols, bsym.source)]
        return _run_execution_transform(impl.execution_transform, bsym)


class OperatorExecutor(Executor):
    kind = "operator"


class FusionExecutor(Executor):
    kind = "fusion"

    def fusion_pass(self, trace):
        """Groups neighbouring bound symbols this executor claimed into fusion regions; returns a new trace."""
        raise NotImplementedError


def _split_importable(path: str) -> tuple[str, str]:
    """'torch.nn.functional.gelu' -> ('torch.nn.functional', 'gelu'); 'torch.Tensor.add_' -> ('torch', 'Tensor.add_'):
    the module to import and the attribute path from it. The attribute path crosses no submodule: whether
    ``import pkg`` also imports ``pkg.sub`` depends on the package, so a printed trace that imports ``pkg`` and
    calls ``pkg.sub.f`` may only work in a process that happened to import ``pkg.sub`` first."""
    import importlib
    import types

    parts = path.split(".")
    for i in range(1, len(parts)):
        module = ".".join(parts[:i])
        try:
            obj = importlib.import_module(module)
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
                if isinstance(obj, types.ModuleType) and getattr(obj, "__spec__", None) is not None:
                    raise AttributeError(attr)  # a submodule file: import it by name instead (a longer prefix)
        except AttributeError:
            continue
        return module, ".".join(parts[i:])
    raise ValueError(f"{path!r} is not an importable callable path")


def _run_execution_transform(transform, bsym: BoundSymbol) -> list[BoundSymbol]:
    from thunder.core.trace import get_tracectx

    trace = get_tracectx()
    scope = trace.push_scope()
    try:
        out = transform(*bsym.args, **bsym.kwargs)
    finally:
        trace.pop_scope()
    # The transform made fresh output proxies: rename them to the originals so later uses still match.
    mapping = {}
    new_flat, _ = tree_flatten(out)
    old_flat, _ = tree_flatten(bsym.output)
    for new, old in zip(new_flat, old_flat):
        if isinstance(new, Proxy) and isinstance(old, Proxy) and new is not old:
            mapping[new.name] = old
    return [swap_proxies(b, mapping, source=bsym.source) for b in scope]


def swap_proxies(bsym: BoundSymbol, mapping: dict, source=None) -> BoundSymbol:
    """``bsym`` with proxies renamed per ``mapping`` (name -> proxy), in arguments, outputs and subsymbols."""

    def sub(tree):
        leaves, spec = tree_flatten(tree)
        return tree_unflatten([mapping.get(x.name, x) if isinstance(x, Proxy) else x for x in leaves], spec)

    return BoundSymbol(bsym.sym, sub(bsym.args), sub(bsym.kwargs), sub(bsym.output),
                       tuple(swap_proxies(s, mapping) for s in bsym.subsymbols),
                       source if source is not None else bsym.source)


# ---------------------------------------------------------------------------------------------
# The executor registry (filled from plugins on first use)
# ---------------------------------------------------------------------------------------------

_executors: dict[str, Executor] = {}
_default_names: list[str] | None = None  # None: everything registered and available, by priority


def register_executor(ex: Executor) -> Executor:
    _executors[ex.name] = ex
    return ex


def _ensure_loaded() -> None:
    from thunder.plugins.manager import load_plugins

    load_plugins()


def get_executor(name: str) -> Executor | None:
    _ensure_loaded()
    return _executors.get(name)


def get_all_executors() -> tuple[Executor, ...]:
    _ensure_loaded()
    return tuple(sorted(_executors.values(), key=lambda e: -e.priority))


def get_default_executors() -> tuple[Executor, ...]:
    _ensure_loaded()
    if _default_names is None:
        return tuple(e for e in get_all_executors() if e.default and e.is_available())
    return tuple(_executors[n] for n in _default_names if n in _executors)


def set_default_executors(executors) -> None:
    global _default_names
    _default_names = [e if isinstance(e, str) else e.name for e in executors]


def add_default_executor(ex: Executor | str) -> None:
    """Puts ``ex`` first among the default executors."""
    name = ex if isinstance(ex, str) else register_executor(ex).name
    current = [e.name for e in get_default_executors() if e.name != name]
    set_default_executors([name, *current])


def remove_default_executor(ex: Executor | str) -> None:
    name = ex if isinstance(ex, str) else ex.name
    set_default_executors([e.name for e in get_default_executors() if e.name != name])


def resolve_executors(executors) -> tuple[Executor, ...]:
    """The executor list for a jit call: names or Executor objects, in priority order as given; the
    python and torch executors are always appended as fallbacks."""
    if executors is None:
        chosen = list(get_default_executors())
    else:
        chosen = []
        for e in executors:
            ex = get_executor(e) if isinstance(e, str) else e
            if ex is None:
                names = ", ".join(sorted(_executors))
                raise ValueError(f"unknown executor {e!r}; known executors: {names}")
            chosen.append(ex)
    for fallback in ("python", "torch"):
        ex = _executors.get(fallback)
        if ex is not None and ex not in chosen:
            chosen.append(ex)
    for ex in chosen:
        ok, reason = ex.availability()
        if not ok:
            raise RuntimeError(f"executor {ex.name!r} is not available: {reason}")
    return tuple(chosen)


# tags later transforms must see on whatever an executor lowers a symbol to: dead-code elimination and CSE never
# drop or merge these (``data_checked`` is added where the data is index data)
_KEPT_TAGS = frozenset({"side_effect", "random"})


def lower_keeping_tags(executor: Executor, bsym: BoundSymbol) -> list[BoundSymbol]:
    """``executor.lower(bsym)``, with ``bsym``'s side-effect and randomness tags on every lowered symbol, and
    ``data_checked`` where its kernels check index data (:meth:`BoundSymbol.may_raise_on_data`). Use it wherever
    a symbol is lowered (dispatch, a fusion pass handing a symbol back to another executor): an in-place copy
    lowered without its tag is dead code to the next pass, and so is a gather whose out-of-bounds error eager
    raises even when its result is unused."""
    lowered = executor.lower(bsym)
    kept = _KEPT_TAGS.intersection(bsym.sym.tags) | ({"data_checked"} if bsym.may_raise_on_data() else set())
    if kept:
        lowered = [b.replace(sym=tagged_symbol(b.sym, kept)) for b in lowered]
    return lowered


# the claiming mechanism of fusion executors (needs the classes above)
from thunder.extend.claiming import ClaimingFusionExecutor, fuse_regions  # noqa: E402
