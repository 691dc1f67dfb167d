"""Symbols (operations) and bound symbols (an operation applied in a trace).

Calling a symbol while tracing records a :class:`BoundSymbol` in the current trace. A prim's meta
computes output proxies; a non-prim symbol's meta is its decomposition, whose calls are recorded as
the bound symbol's ``subsymbols``. Executor symbols (``executor`` set) stand for a concrete
implementation: they print as a call to an importable function and are what final traces run.

A higher-order bound symbol (``cond``, a loop, a traced ``autograd.Function``) carries *sub-traces*: closed
traces (every value they read is one of their parameters) passed among its arguments, so grad rules and
executor implementations receive them like any argument. ``bsym.subtraces`` lists them and
``bsym.map_subtraces(fn)`` rebuilds the bound symbol with each one transformed; codegen prints each as a
nested ``def`` whose name the printed call passes in its place.
"""

from __future__ import annotations

from thunder.core.errors import ReadInsideRegionError
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten, tree_unflatten

__all__ = ["Symbol", "BoundSymbol", "SourceLocation", "call_rewrites", "is_subtrace", "tagged_symbol"]

# symbol id -> rewrite(symbol, args, kwargs) -> (args, kwargs): how calls the user's program makes itself are
# changed before they are recorded, in traces recorded from user code (those with a tensor_resolver), never
# inside a decomposition. Whatever a rewrite records (autocast's casts) lands in the trace before the call.
call_rewrites: dict = {}


def is_subtrace(x) -> bool:
    from thunder.core.trace import TraceCtx

    return isinstance(x, TraceCtx)


class SourceLocation:
    __slots__ = ("filename", "lineno", "function", "line")

    def __init__(self, filename: str, lineno: int, function: str = "", line: str = ""):
        self.filename, self.lineno, self.function, self.line = filename, lineno, function, line

    def __eq__(self, other):
        return isinstance(other, SourceLocation) and (self.filename, self.lineno) == (other.filename, other.lineno)

    def __hash__(self):
        return hash((self.filename, self.lineno))

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}: {self.line}" if self.line else f"{self.filename}:{self.lineno}"


class Symbol:
    """An operation.

    ``module``/``name`` say how the symbol prints and where the callable is found: the printed call is
    ``{alias}.{name}(...)`` after ``import {module} as {alias}`` (or ``import {module}`` when alias is
    None, printing ``{module}.{name}``). ``call_ctx`` instead binds names directly, for callables that
    cannot be imported.
    """

    __slots__ = ("name", "id", "meta", "is_prim", "module", "alias", "tags", "executor", "python_printer",
                 "call_ctx", "__weakref__")

    def __init__(self, name: str, meta=None, *, id: str | None = None, is_prim: bool = False, module: str | None = None,
                 alias: str | None = None, tags: tuple = (), executor=None, python_printer=None, call_ctx=None):
        self.name, self.meta, self.is_prim = name, meta, is_prim
        self.module, self.alias = module, alias
        self.id = id if id is not None else (f"{alias or module}.{name}" if module else name)
        self.tags, self.executor, self.python_printer, self.call_ctx = tuple(tags), executor, python_printer, call_ctx

    def __repr__(self) -> str:
        return f"[Symbol {self.id}]"

    @property
    def printed_name(self) -> str:
        if self.call_ctx is not None or self.module is None:
            return self.name
        return f"{self.alias or self.module}.{self.name}"

    def __get__(self, obj, cls=None):
        # Symbols stored as class attributes (Tensor methods) bind like functions.
        if obj is None:
            return self
        import types

        return types.MethodType(self, obj)

    def bind(self, *args, output, subsymbols=(), source=None, **kwargs) -> "BoundSymbol":
        return BoundSymbol(self, args, kwargs, output, tuple(subsymbols), source)

    def _decompose(self, trace, args, kwargs) -> tuple:
        """(output, the bound symbols its meta recorded): the meta run in a scope of its own."""
        scope = trace.push_scope()
        trace.decomposing += 1
        try:
            output = self.meta(*args, **kwargs)
        except Exception:
            trace.scopes[-2].extend(_numbers_computed(scope))
            if "inplace" in self.tags and trace.decomposing == 1 and trace.on_record is not None:
                # eager checks an in-place write's memory overlap before its shapes (TensorIterator does):
                # the overlap error, where eager gives it, is the program's rather than the meta's. The sizes
                # the check compares (constraints of the trace) are computed in this scope: kept too.
                checked_from = len(scope)
                try:
                    trace.on_record(BoundSymbol(self, args, kwargs, args[0] if args else None, (),
                                                trace.current_location()))
                finally:
                    trace.scopes[-2].extend(_numbers_computed(scope[checked_from:]))
            raise
        finally:
            trace.decomposing -= 1
            trace.pop_scope()
        return output, tuple(scope)

    def __call__(self, *args, **kwargs):
        from thunder.core.trace import get_tracectx

        trace = get_tracectx()
        if trace is None:
            raise RuntimeError(f"{self.id} can only be called while tracing (inside thunder.jit)")
        if trace.tensor_resolver is not None and not self.is_prim:
            args, kwargs = trace.tensor_resolver(args, kwargs)
            rewrite = call_rewrites.get(self.id)
            if rewrite is not None and trace.decomposing == 0:
                args, kwargs = rewrite(self, args, kwargs)
        if self.is_prim:
            output = self.meta(*args, **kwargs)
            subsymbols = ()
        else:
            try:
                output, subsymbols = self._decompose(trace, args, kwargs)
            except ReadInsideRegionError:
                # its decomposition needs the value of a number computed from tensor data (a dim, a size): called
                # from the program itself, the program is split before it, the numbers read, and it traced again
                read = _read_data_dependent(trace, args, kwargs, self.name) if trace.decomposing == 0 else None
                if read is None:
                    raise
                args, kwargs = read
                output, subsymbols = self._decompose(trace, args, kwargs)
        bsym = BoundSymbol(self, args, kwargs, output, subsymbols, trace.current_location())
        if trace.on_record is not None and not trace.decomposing:
            try:
                trace.on_record(bsym)  # may raise eager's error for the call: then it is not recorded
            except Exception:
                trace.scopes[-1].extend(_numbers_computed(subsymbols))
                raise
        trace.scopes[-1].append(bsym)
        return output


def _read_data_dependent(trace, args, kwargs, name: str):
    """(args, kwargs) with each number computed from tensor data read (the program split there), or None: none."""
    reader = trace.value_reader
    leaves, spec = tree_flatten((args, kwargs))
    if reader is None or not any(isinstance(x, NumberProxy) and x.data_dependent for x in leaves):
        return None
    return tree_unflatten([reader.read_number(x, f"an argument of {name}")
                           if isinstance(x, NumberProxy) and x.data_dependent else x for x in leaves], spec)


def _numbers_computed(bsyms) -> list:
    """Of a call that fails (eager's error for these inputs), the numbers its decomposition computed: they stay in
    the trace, so the constraints recorded on them (the prologue checks them) can still be computed; numbers computed
    deeper (a broadcast inside ``pow`` inside ``pow_``) too."""
    numbers = []
    for b in bsyms:
        if b.flat_proxy_outs and all(isinstance(o, NumberProxy) for o in b.flat_proxy_outs):
            numbers.append(b)
        else:
            numbers.extend(_numbers_computed(b.subsymbols))
    return numbers


class BoundSymbol:
    __slots__ = ("sym", "args", "kwargs", "output", "subsymbols", "source", "_flat_args", "_flat_outs")

    def __init__(self, sym: Symbol, args: tuple, kwargs: dict, output, subsymbols: tuple = (), source=None):
        self.sym, self.args, self.kwargs, self.output = sym, tuple(args), dict(kwargs), output
        self.subsymbols, self.source = tuple(subsymbols), source
        self._flat_args = self._flat_outs = None

    def __repr__(self) -> str:
        from thunder.core.codegen import bsym_lines

        return "\n".join(bsym_lines(self, set(), with_subsymbols=True))

    def replace(self, **changes) -> "BoundSymbol":
        kw = dict(sym=self.sym, args=self.args, kwargs=self.kwargs, output=self.output, subsymbols=self.subsymbols,
                  source=self.source)
        kw.update(changes)
        return BoundSymbol(**kw)

    @property
    def subtraces(self) -> tuple:
        """The sub-traces among the arguments (branches, loop bodies), in argument order."""
        return tuple(a for a in self.flat_args if is_subtrace(a))

    def map_subtraces(self, fn) -> "BoundSymbol":
        """This bound symbol with each sub-trace ``t`` replaced by ``fn(t)`` (itself when it has none)."""
        if not self.subtraces:
            return self
        from thunder.core.pytree import tree_unflatten

        leaves, spec = tree_flatten((self.args, self.kwargs))
        args, kwargs = tree_unflatten([fn(x) if is_subtrace(x) else x for x in leaves], spec)
        return self.replace(args=args, kwargs=kwargs)

    @property
    def flat_args(self) -> list:
        if self._flat_args is None:
            self._flat_args = tree_flatten((self.args, self.kwargs))[0]
        return self._flat_args

    @property
    def flat_proxy_args(self) -> list[Proxy]:
        return [a for a in self.flat_args if isinstance(a, Proxy)]

    @property
    def flat_outs(self) -> list:
        if self._flat_outs is None:
            self._flat_outs = tree_flatten(self.output)[0]
        return self._flat_outs

    @property
    def flat_proxy_outs(self) -> list[Proxy]:
        return [o for o in self.flat_outs if isinstance(o, Proxy)]

    def number_definitions(self) -> list["BoundSymbol"]:
        """Prims inside the decomposition that compute numbers (derived sizes, under symbolic values): a
        later symbol may use them (``x[1:].shape[0] + 1``) even where this one's own outputs are unused or
        it runs whole on an executor, so they must stay defined. Each keeps this symbol's source line."""
        from thunder.core.proxies import NumberProxy

        found = []
        for sub in self.subsymbols:
            if sub.source is None:
                sub = sub.replace(source=self.source)
            if sub.sym.is_prim and any(isinstance(o, NumberProxy) for o in sub.flat_proxy_outs):
                found.append(sub)
            else:
                found.extend(sub.number_definitions())
        return found

    def may_raise_on_data(self) -> bool:
        """Whether this symbol or its decomposition holds a symbol whose kernel checks tensor data (an index out
        of bounds): eager raises that error even when the result is unused, so dead-code elimination keeps it
        and lowering keeps the ``data_checked`` tag. Only index tensors (integer tensors after the first
        argument) carry such data: ``v[..., ::2] = 0`` has none."""
        from thunder.core import dtypes

        if "data_checked" in self.sym.tags and any(
                isinstance(p, TensorProxy) and dtypes.is_integer_dtype(p.dtype)
                for p in tree_flatten((self.args[1:], self.kwargs))[0]):
            return True
        return any(s.may_raise_on_data() for s in self.subsymbols)


_tagged_symbols: dict = {}


def tagged_symbol(sym: Symbol, tags) -> Symbol:
    """``sym`` with ``tags`` added (one symbol per combination, made once)."""
    key = (sym, frozenset(tags))  # the symbol itself: an id() could be reused by a later symbol
    tagged = _tagged_symbols.get(key)
    if tagged is None:
        if set(tags) <= set(sym.tags):
            tagged = sym
        else:
            tagged = Symbol(sym.name, sym.meta, id=sym.id, is_prim=sym.is_prim, module=sym.module, alias=sym.alias,
                            tags=tuple(sym.tags) + tuple(sorted(set(tags) - set(sym.tags))), executor=sym.executor,
                            python_printer=sym.python_printer, call_ctx=sym.call_ctx)
        _tagged_symbols[key] = tagged
    return tagged
