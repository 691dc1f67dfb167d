"""Traces: ordered bound symbols over named proxies, printable as Python, and the tracing context."""

from __future__ import annotations

import builtins
import contextlib
import contextvars
import time

from thunder.core.proxies import Proxy

__all__ = ["TraceCtx", "TraceProvenance", "get_tracectx", "tracectx", "from_trace", "timed_transform"]

_current_trace: contextvars.ContextVar = contextvars.ContextVar("thunder_trace", default=None)


def get_tracectx() -> "TraceCtx | None":
    return _current_trace.get()


@contextlib.contextmanager
def tracectx(trace: "TraceCtx"):
    token = _current_trace.set(trace)
    try:
        yield trace
    finally:
        _current_trace.reset(token)


class TraceProvenance:
    """What made a trace: the transform's description and how long it took."""

    __slots__ = ("description", "seconds")

    def __init__(self, description: str, seconds: float | None = None):
        self.description, self.seconds = description, seconds

    def __str__(self) -> str:
        took = f" (took {self.seconds * 1e3:.2f} ms)" if self.seconds is not None else ""
        return f"# Constructed by {self.description}{took}"


# Names generated code relies on: Python's builtins (a prologue calls len, isinstance, sum) and the modules
# printed traces import. A value named after one of them (an argument ``sum``, the ObjectRef of torch.sum
# that a prologue checks) gets another name, so it never shadows what the generated code calls. ``input``,
# the argument name of most torch modules' forward, is the exception: generated code never calls input().
RESERVED_NAMES = frozenset(dir(builtins)) - {"input"} | frozenset({
    "torch", "thunder", "math", "operator", "prims", "ltorch", "opaque", "dtypes", "Device", "args", "kwargs"})


class TraceCtx:
    def __init__(self, fn_name: str = "computation"):
        self.fn_name = fn_name
        self.args: list = []  # positional parameters of the generated function: proxies
        self.bound_symbols: list = []
        self.output = None
        self.names: set[str] = set(RESERVED_NAMES)
        self._counters: dict[str, int] = {}
        self.scopes: list[list] = [self.bound_symbols]
        self.location_fn = None  # () -> SourceLocation | None, set by whoever drives tracing
        self.user_location_fn = None  # () -> the innermost location in the user's own code (not a library's)
        # (real tensor) -> proxy, set by the jit: tensors that reach a symbol without passing through the
        # interpreter's provenance (stored in an object built during tracing) are mapped to their inputs
        self.tensor_resolver = None
        self.decomposing = 0  # how many symbols' decompositions are running (0: the traced program's own calls)
        self.provenance: TraceProvenance | None = None
        self.decorators: list[str] = []  # e.g. "@torch.no_grad()", printed above the signature
        # (NumberProxy, value): values control flow or native code relied on; the prologue re-checks them
        self.constraints: list = []
        self.grad_enabled: bool = True  # grad mode when tracing started (the prologue checks it)
        # query function -> its answer, for process-wide switches the trace followed (torch.get_default_dtype,
        # torch.are_deterministic_algorithms_enabled, ...); the prologue asks again
        self.state_reads: dict = {}
        # (bound symbol) -> None, set by the jit while it interprets the program: sees each call the program makes
        self.on_record = None
        # set by the jit: its model of eager's strides for this trace's tensors (transforms/layouts.py), asked by the
        # torch language while tracing (stride(), is_contiguous(), view errors) and by functionalization after
        self.layouts = None
        # set by the jit on the program's own trace: reads Python values from tensor data by splitting the program
        # there (frontend/value_reads.py); sub-traces have none, so a read inside them is refused
        self.value_reader = None
        # names of the views ``rebind`` made a tensor of the program stand for (``x.t_()``): in-place changes
        self.restrided_views: set[str] = set()
        # input name -> the earlier input that is the very same tensor (passed twice, a tied weight)
        self.input_aliases: dict[str, str] = {}
        # input name -> an earlier input whose memory it may share (a segment's inputs: a view an earlier segment
        # made of a tensor it hands over too); executors that reorder or write in place must treat them as one
        self.input_memory: dict[str, str] = {}
        # inputs the program made and holds nowhere else, whose last reader is in this trace (a segment's
        # accumulator, frontend/segments.py): an executor may write into them in place
        self.owned_inputs: frozenset[str] = frozenset()
        # (old, proxy, how) -> None, set by the jit: sees each rebind (below), to update its own records of proxies
        self.on_rebind = None
        self._compiled = None

    # names -------------------------------------------------------------------------------------
    def make_name(self, prefix: str) -> str:
        n = self._counters.get(prefix, 0)
        while f"{prefix}{n}" in self.names:
            n += 1
        self._counters[prefix] = n + 1
        name = f"{prefix}{n}"
        self.names.add(name)
        return name

    def add_name(self, name: str) -> None:
        if name in self.names:
            raise ValueError(f"the name {name!r} is already used in this trace")
        self.names.add(name)

    def make_unique_name(self, base: str) -> str:
        """``base`` if free, else ``base_1``, ``base_2``...; reserves it."""
        name, n = base, 0
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        return name

    # recording ---------------------------------------------------------------------------------
    def push_scope(self) -> list:
        scope: list = []
        self.scopes.append(scope)
        return scope

    def pop_scope(self) -> list:
        return self.scopes.pop()

    def rebind(self, proxy, value, how=None) -> None:
        """The program's object ``proxy`` stands for ``value`` from now on, as after ``x.t_()`` (x becomes a view of
        what it was and stays the same Python object, so every later use of it, a container holding it, a return,
        reads the view). What was recorded so far read the tensor as it was: there ``proxy`` is replaced by
        ``old``, a copy of it under its old name; then ``proxy`` takes ``value``'s name and metadata and its place
        (the op that made ``value`` makes ``proxy``). ``how`` (method name, arguments) is passed to ``on_rebind``."""
        if value is proxy:
            return
        old = proxy.replace(name=proxy.name)
        old.outside = proxy.outside
        self._swap_recorded(proxy.name, old)
        proxy.take_place_of(value)
        self._swap_recorded(value.name, proxy)
        self.restrided_views.add(proxy.name)
        if self.on_rebind is not None:
            self.on_rebind(old, proxy, value, how)

    def _swap_recorded(self, name: str, new) -> None:
        for scope in self.scopes:
            scope[:] = [_with_proxy(b, name, new) for b in scope]

    def add_constraint(self, proxy, value) -> None:
        if not any(p is proxy for p, _ in self.constraints):
            self.constraints.append((proxy, value))

    def current_location(self):
        return self.location_fn() if self.location_fn is not None else None

    def user_location(self):
        return self.user_location_fn() if self.user_location_fn is not None else None

    # printing and running ----------------------------------------------------------------------
    def python(self, *, with_subsymbols: bool = True) -> str:
        from thunder.core.codegen import trace_source

        return trace_source(self, with_subsymbols=with_subsymbols)

    def __repr__(self) -> str:
        return self.python()

    def python_callable(self):
        """The trace compiled to a Python function (compiled once per trace)."""
        if self._compiled is None:
            from thunder.core.codegen import compile_trace

            self._compiled = compile_trace(self)
        return self._compiled


def _with_proxy(bsym, name: str, new):
    """``bsym`` with the proxy called ``name`` replaced by ``new`` (itself when it does not refer to it)."""
    from thunder.core.pytree import tree_flatten, tree_unflatten

    def refers(b) -> bool:
        return any(isinstance(x, Proxy) and x.name == name for x in (*b.flat_args, *b.flat_outs)) or any(
            refers(s) for s in b.subsymbols)

    if not refers(bsym):
        return bsym

    def sub(tree):
        leaves, spec = tree_flatten(tree)
        return tree_unflatten([new if isinstance(x, Proxy) and x.name == name else x for x in leaves], spec)

    return bsym.replace(args=sub(bsym.args), kwargs=sub(bsym.kwargs), output=sub(bsym.output),
                        subsymbols=tuple(_with_proxy(s, name, new) for s in bsym.subsymbols))


def from_trace(trace: TraceCtx) -> TraceCtx:
    """An empty trace with ``trace``'s signature, names and output, for a transform to fill."""
    t = TraceCtx(trace.fn_name)
    t.args = list(trace.args)
    t.output = trace.output
    t.names = set(trace.names)
    t._counters = dict(trace._counters)
    t.decorators = list(trace.decorators)
    t.constraints = list(trace.constraints)
    t.grad_enabled = trace.grad_enabled
    t.state_reads = dict(trace.state_reads)
    t.input_aliases = dict(trace.input_aliases)
    t.input_memory = dict(trace.input_memory)
    t.owned_inputs = trace.owned_inputs
    t.layouts = trace.layouts
    return t


@contextlib.contextmanager
def timed_transform(description: str):
    """``with timed_transform("Dead code elimination") as done: ...; done(new_trace)`` stamps provenance."""
    start = time.perf_counter_ns()
    box: list = []
    yield box.append
    (new_trace,) = box
    new_trace.provenance = TraceProvenance(description, (time.perf_counter_ns() - start) / 1e9)


def proxies_of(x) -> list[Proxy]:
    from thunder.core.pytree import tree_flatten

    return [p for p in tree_flatten(x)[0] if isinstance(p, Proxy)]
