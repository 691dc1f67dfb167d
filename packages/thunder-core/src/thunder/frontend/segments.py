"""Python values read from tensor data: the program is split into segments where it reads one.

While the program is traced, a read (``bool(t)``, ``int(t)``, ``t.tolist()``, control flow on ``t.item()``)
runs the part recorded since the last read on the call's real inputs (a *probe*, without autograd, on copies
of what it updates), hands the value to the interpreter, and records a ``segment_end`` marker carrying the
read value and every tensor or number the program can still reach. After tracing, the whole trace is made
functional (so an in-place update across a split is an ordinary new version, views included) and cut at the
markers: each piece is an ordinary trace (autograd split, dispatched, fused), run as one autograd node, so
gradients flow through PyTorch's autograd from one segment into the one before.

At run time the segments run in order; after each, the value is read from its first output and looked up
among the continuations traced for it (a check like a prologue's). A new value traces a new continuation:
the program is interpreted again with the values already read given (nothing before runs twice) and the
segments after the split are compiled and kept under that value. Each split keeps at most
``MAX_CONTINUATIONS`` of them, with a warning when a value keeps changing.
"""

from __future__ import annotations

import contextlib
import operator
import time
import warnings

import torch

from thunder.core import prims
from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.symbol import Symbol
from thunder.core.trace import _current_trace, from_trace

__all__ = ["ValueReader", "ContinuationLimitWarning", "MAX_CONTINUATIONS", "segment_end", "SegmentedProgram"]

MAX_CONTINUATIONS = 16


class ContinuationLimitWarning(UserWarning):
    """A value read from tensor data took more than ``MAX_CONTINUATIONS`` values at one split."""


def _segment_end_meta(value, *live):
    return None


# Where a segment ends: the read value first, then what the rest of the program may use. Kept by dead-code
# elimination (a side effect) and renamed by functionalization like any read; CSE merges nothing across it (a
# continuation traced later must not need a value the segments before it did not keep).
segment_end = Symbol("segment_end", _segment_end_meta, id="segment_end", is_prim=True,
                     module="thunder.frontend.segments", tags=("side_effect", "cse_barrier"))

# how a read turns the segment's first output into the Python value the program sees (eager's conversions)
_CONVERSIONS = {
    "__bool__": bool,
    "__int__": int,
    "__float__": float,
    "__index__": operator.index,
    "tolist": lambda t: t.tolist(),
    "number": lambda n: n,
    "size": int,
}
_DESCRIPTIONS = {"__bool__": "bool()", "__int__": "int()", "__float__": "float()", "__index__": "an index",
                 "tolist": ".tolist()"}


def _freeze(value):
    """A hashable key for a read value (``tolist`` gives nested lists); NaN keys by its text, as NaN != NaN."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, float) and value != value:
        return "nan"
    return value


# the key under which the continuations of a size read are kept with their guards (checks of its constraints)
_ANY_SIZE = object()


class Read:
    """One split: how the value is converted, the value seen while tracing, and the user's line. ``guard``: for a
    size the rest of the program used symbolically, ``guard(size) -> bool`` checks the constraints recorded on
    it (the continuation serves every size passing them); None: the continuation holds for this value only."""

    __slots__ = ("kind", "value", "location", "what", "guard")

    def __init__(self, kind, value, location, what):
        self.kind, self.value, self.location, self.what = kind, value, location, what
        self.guard = None

    @property
    def key(self):
        return _freeze(self.value) if self.guard is None else _ANY_SIZE


def _as_number(a, dtype):
    return {bool: bool, int: int, float: float, complex: complex}[dtype](a) if dtype in (bool, int, float, complex) \
        else None


_NUMBER_FUNCTIONS = {**prims.number_functions, "convert_element_type": _as_number}


def size_read_guards(computation, reads) -> None:
    """Gives each size read whose constraints (the branches, indices and shape checks the rest of the program
    took on it) are computed from that size alone a ``guard`` checking them; those constraints leave
    ``computation.constraints``, whose prologue cannot compute them. Any other constraint on a read size keeps the
    continuation for its exact value."""
    from thunder.frontend.prologue import _tautology

    markers = [b for b in computation.bound_symbols if b.sym is segment_end]
    sizes = {m.args[0].name: read for m, read in zip(markers, reads) if read.kind == "size"}
    if not sizes:
        return
    origin = {name: {name} for name in sizes}  # number name -> the size reads it was computed from
    defs = {}  # number name -> the bound symbol computing it

    def visit(bsyms):
        for b in bsyms:
            visit(b.subsymbols)
            sources = set().union(*(origin.get(a.name, ()) for a in b.flat_proxy_args if isinstance(a, NumberProxy)))
            for o in b.flat_proxy_outs:
                if isinstance(o, NumberProxy) and sources:
                    origin.setdefault(o.name, set()).update(sources)
                    defs.setdefault(o.name, b)

    visit(computation.bound_symbols)
    checks = {name: [] for name in sizes}
    exact, kept, seen = set(), [], set()
    for proxy, value in computation.constraints:
        sources = origin.get(proxy.name)
        if not sources:
            kept.append((proxy, value))
            continue
        b = defs.get(proxy.name)
        if b is not None and _tautology(b, value):
            continue
        if len(sources) > 1 or not _computable(proxy, defs, sizes):
            exact.update(sources)
            continue
        key = (proxy.name, value)
        if key not in seen:
            seen.add(key)
            checks[next(iter(sources))].append((proxy, value))
    computation.constraints = kept
    for name, read in sizes.items():
        read.guard = None if name in exact else _guard(name, checks[name], defs)


def _computable(proxy, defs, sizes) -> bool:
    if proxy.name in sizes:
        return True
    b = defs.get(proxy.name)
    if b is None or b.sym.name not in _NUMBER_FUNCTIONS or not b.sym.is_prim:
        return False
    return all(not isinstance(a, Proxy) or (isinstance(a, NumberProxy) and _computable(a, defs, sizes))
               for a in b.args) and not b.kwargs


def _sizes_check(reads):
    """``check(values) -> bool`` for a continuation traced later: the sizes read before it (``values``, in order)
    must pass what *its* segments assumed about them, which the splits before it did not check (None: no size)."""
    sizes = [(i, r) for i, r in enumerate(reads) if r.kind == "size"]
    if not sizes:
        return None

    def check(values) -> bool:
        return all(values[i] == r.value if r.guard is None else r.guard(values[i]) for i, r in sizes)

    return check


def _guard(name, checks, defs):
    """``guard(size) -> bool``: the constraints ``checks`` computed from the size ``name``, as one generated
    expression (broadcasts ask the same question many times: each distinct one is asked once)."""
    namespace: dict = {}

    def expr(p) -> str:
        if isinstance(p, (bool, int, float)):
            return repr(p)
        if not isinstance(p, NumberProxy):
            constant = f"_c{len(namespace)}"
            namespace[constant] = p
            return constant
        if p.name == name:
            return "size"
        b = defs[p.name]
        fn = f"_{b.sym.name}"
        namespace[fn] = _NUMBER_FUNCTIONS[b.sym.name]
        return f"{fn}({', '.join(expr(a) for a in b.args)})"

    questions = dict.fromkeys(f"({expr(p)}) == {value!r}" for p, value in checks)
    guard = eval(f"lambda size: {' and '.join(questions) or 'True'}", namespace)  # noqa: S307 (generated)
    guard.checks = tuple(questions)
    return guard


@contextlib.contextmanager
def _outside_tracing():
    token = _current_trace.set(None)
    try:
        yield
    finally:
        _current_trace.reset(token)


class ValueReader:
    """Reads values from tensor data while the program is traced (``trace.value_reader``).

    known: the values of the first reads, when a continuation is traced for them (those segments already ran);
    env: name -> real value of what already ran (the call's inputs and the outputs of earlier segments).
    """

    def __init__(self, trace, hooks, executors, known=(), env=None):
        self.trace, self.hooks, self.executors = trace, hooks, executors
        self.known = list(known)
        self.env = dict(env or {})
        self.owned: set[str] = set()  # names whose value in env is the probes' own copy (theirs to update)
        self.evaluated = 0  # bound symbols of the trace already run by probes
        self.reads: list[Read] = []
        self._rng = None

    # what the program calls -----------------------------------------------------------------------------------
    def read_tensor(self, proxy: TensorProxy, kind: str):
        return self._read(proxy, kind, f"{_DESCRIPTIONS[kind]} of a tensor")

    def read_number(self, proxy: NumberProxy, what: str):
        return self._read(proxy, "number", f"{what} of {proxy.name}")

    def read_size(self, count: TensorProxy, what: str) -> NumberProxy:
        """The size an op's output will have, counted by the 0-d tensor ``count``: read here, but a symbolic
        number for the rest of the program, so one continuation serves every size the program does not branch on
        (its constraints decide, see ``size_read_guards``)."""
        self._check_top_level(what)
        size = prims.item(count)  # recorded at the top level: the segment hands the size over
        size.value = self._read(size, "size", what)
        size.data_dependent = False
        if size.value in (0, 1):
            # specialized, as PyTorch's symbolic shapes do: empty and broadcastable dims take other paths in
            # the ops after (a softmax over no element), so their continuations are kept for the value itself
            self.reads[-1].kind = "number"
            return size.value
        return size

    def _check_top_level(self, what):
        if len(self.trace.scopes) > 1:
            raise UnsupportedError(
                f"{what} needs a value computed from tensor data inside a region thunder traces as one operation "
                f"(a checkpoint, an autograd.Function, a torch operation's decomposition)"
                f"{user_location_suffix()}: the program can only be split between operations; read the value before "
                "the region and pass it in, or keep it a tensor (torch.where)"
            )

    def _read(self, proxy, kind, what):
        trace = self.trace
        self._check_top_level(what)
        index = len(self.reads)
        if index < len(self.known):
            value = self.known[index]  # this segment already ran in the call being continued
            self.evaluated = len(trace.bound_symbols)
        else:
            self._save_rng()
            self._run_pending()
            value = _CONVERSIONS[kind](self._value(proxy))
        live = self._live_proxies(exclude=proxy)
        trace.bound_symbols.append(segment_end.bind(proxy, *live, output=None, source=trace.current_location()))
        self.evaluated = len(trace.bound_symbols)
        self.reads.append(Read(kind, value, trace.current_location(), what))
        return value

    # probes: running what was recorded, to know the value -----------------------------------------------------
    def _value(self, proxy):
        name = proxy.name
        if name in self.env:
            return self.env[name]
        for record in self.hooks.records:
            if record.proxy is not None and record.proxy.name == name:
                self.env[name] = record.value
                return record.value
        if isinstance(proxy, NumberProxy) and not proxy.data_dependent:
            return proxy.value  # a symbolic number input: its value in this call
        raise UnsupportedError(f"internal error: the value of {name} is not known where the program is split; "
                               "please file an issue")

    def _run_pending(self):
        from thunder.transforms.pipeline import run_pipeline

        bsyms = [b for b in self.trace.bound_symbols[self.evaluated:] if b.sym is not segment_end]
        self.evaluated = len(self.trace.bound_symbols)
        if not bsyms:
            return
        free = _uses(bsyms, ())  # symbolic sizes of the tensors read included: decompositions compute with them
        defined = {p.name: p for bsym in bsyms for p in bsym.flat_proxy_outs}
        probe = from_trace(self.trace)
        probe.fn_name = "probe"
        probe.args = list(free.values())
        probe.bound_symbols = bsyms
        probe.output = tuple(p for p in defined.values() if isinstance(p, (TensorProxy, NumberProxy)))
        with _outside_tracing():
            final = run_pipeline(probe, self.executors, check_inplace=False)[-1]
            for p in final.bound_symbols:
                out = p.kwargs.get("out")
                if isinstance(out, Proxy) and out.name in free and out.name not in self.owned:
                    value = self._value(out)
                    if isinstance(value, torch.Tensor):  # the probe updates a copy, never the caller's tensor
                        self.env[out.name] = value.detach().clone()
                    self.owned.add(out.name)
            args = [self._value(p) for p in probe.args]
            with torch.no_grad():
                values = final.python_callable()(*args)
        self.env.update(zip((p.name for p in probe.output), values))
        self.owned.update(p.name for p in probe.output)

    def _save_rng(self):
        # probes draw random numbers the real run must draw again: the generator is put back after tracing
        if self._rng is None:
            self._rng = (torch.get_rng_state(),
                         torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None)

    def finish(self):
        if self._rng is not None:
            torch.set_rng_state(self._rng[0])
            if self._rng[1] is not None:
                torch.cuda.set_rng_state_all(self._rng[1])
            self._rng = None

    # what the rest of the program may use ---------------------------------------------------------------------
    def _live_proxies(self, exclude) -> list:
        """Intermediate tensors and numbers the interpreted frames can still reach: a continuation traced later
        for another value can use only these (and the program's inputs)."""
        from thunder.interpreter.frame import Frame
        from thunder.interpreter.runtime import current_runtime
        from thunder.interpreter.wrapped import WrappedValue

        made = self._made_names()
        rt = current_runtime()
        pending = list(rt.frames) if rt is not None else []
        seen, found = set(), {}
        budget = 100_000
        while pending and budget:
            x = pending.pop()
            budget -= 1
            if x is None or isinstance(x, (bool, int, float, complex, str, bytes, type, torch.Tensor)):
                continue
            if id(x) in seen:
                continue
            seen.add(id(x))
            if isinstance(x, Proxy):
                if x.name in made and x is not exclude and x.name != exclude.name:
                    found.setdefault(x.name, x)
                continue
            if isinstance(x, Frame):
                pending.extend(x.locals)
                pending.extend(x.stack)
            elif isinstance(x, WrappedValue):
                pending.append(x.value)
            elif isinstance(x, (list, tuple, set, frozenset)):
                pending.extend(x)
            elif isinstance(x, dict):
                pending.extend(x.values())
                pending.extend(x.keys())
            else:
                d = getattr(x, "__dict__", None)
                if isinstance(d, dict):
                    pending.extend(d.values())
                for cls in type(x).__mro__:
                    for slot in cls.__dict__.get("__slots__", ()):
                        if isinstance(slot, str):
                            pending.append(getattr(x, slot, None))
                cells = getattr(x, "__closure__", None)
                if cells:
                    for c in cells:
                        try:
                            pending.append(c.cell_contents)
                        except ValueError:
                            pass
        return list(found.values())

    def _made_names(self) -> set[str]:
        names = set()
        for bsym in self.trace.bound_symbols:
            for p in bsym.flat_proxy_outs:
                names.add(p.name)
        return names


# ---------------------------------------------------------------------------------------------------------------
# After tracing: the functional trace cut at its markers, compiled, and run
# ---------------------------------------------------------------------------------------------------------------


class _Segment:
    """One compiled segment. A segment that ends at a read has ``children``: read value -> the continuations
    traced for it, each ``(prologue or None, its input names, first segment)``; the last one has ``epilogue``
    and ``path`` (what ``thunder.last_traces`` and friends show when the call ended there)."""

    __slots__ = ("run", "arg_names", "out_names", "pre_names", "read", "children", "epilogue", "path", "traces",
                 "backward_traces", "saved", "grad_mode", "carrying_grad")

    def __init__(self, run, arg_names, out_names, pre_names, read):
        self.run, self.arg_names, self.out_names, self.pre_names, self.read = run, arg_names, out_names, pre_names, read
        self.children = {} if read is not None else None
        self.epilogue = self.path = None
        self.traces, self.backward_traces, self.saved = [], [], ()
        self.grad_mode = None  # the grad mode to call the next segment in, when this one leaves another
        self.carrying_grad = set()  # names of its outputs its autograd node hands over with a gradient


class _Path:
    """The compiled segments of one trace of the program, from the first one compiled for it."""

    def __init__(self):
        self.segments: list[_Segment] = []
        self.traces: list = []
        self.backward_traces: list = []
        self.saved: tuple = ()
        self.updated_inputs: set[str] = set()


def _pieces(trace) -> list:
    """(bound symbols, the segment_end marker or None for the last piece) of ``trace`` in order."""
    pieces, current = [], []
    for bsym in trace.bound_symbols:
        if bsym.sym is segment_end:
            pieces.append((current, bsym))
            current = []
        else:
            current.append(bsym)
    pieces.append((current, None))
    return pieces


def _uses(bsyms, tail) -> dict:
    """name -> proxy of what ``bsyms`` (then ``tail``, the marker's arguments or the output) read and do not
    define themselves, symbolic sizes of those tensors included, in order of first use."""
    defined, used = set(), {}

    def use(p):
        if isinstance(p, (TensorProxy, NumberProxy)) and p.name not in defined:
            used.setdefault(p.name, p)
            if isinstance(p, TensorProxy):
                for d in p.shape:
                    if isinstance(d, NumberProxy):
                        used.setdefault(d.name, d)

    for bsym in bsyms:
        for p in bsym.flat_proxy_args:
            use(p)
        defined.update(o.name for o in bsym.flat_proxy_outs)
    for p in tail:
        if isinstance(p, Proxy):
            use(p)
    return used


class SegmentedProgram:
    """The segments of one cache entry and their continuations; its ``run`` is the entry's epilogue (the
    entry's computation hands it the prologue's inputs)."""

    def __init__(self, jfn, reads):
        self.jfn = jfn
        self.reads = reads  # of the first trace: what each split reads and where
        self.entry = None
        self.root: _Segment | None = None
        self.input_names: list[str] = []
        self.prologue_text = ""
        self.shown = None

    # compiling ---------------------------------------------------------------------------------------------------
    def compile_path(self, prepared, computation, first: int = 0, reads=None, carrying_grad=()) -> _Path:
        """Compiles the pieces of ``prepared`` (functional, with markers) from the ``first``-th on;
        ``carrying_grad``: names the segments before hand over as differentiable outputs of their autograd node."""
        from thunder.core.trace import TraceProvenance
        from thunder.frontend.jit import _updated_inputs

        reads = reads if reads is not None else self.reads
        size_read_guards(computation, reads)
        pieces = _pieces(prepared)
        pre_markers = [b for b in computation.bound_symbols if b.sym is segment_end]
        if len(pieces) - 1 != len(reads) or len(pre_markers) != len(reads):
            raise UnsupportedError("internal error: the program's splits changed while it was compiled; please "
                                   "file an issue")
        flat_output = [p for p in tree_flatten(prepared.output)[0] if isinstance(p, Proxy)]
        uses = [_uses(bsyms, marker.args if marker is not None else flat_output) for bsyms, marker in pieces]
        # grad mode where each piece starts: a split inside a no_grad region starts the next segment with grad off.
        # Each segment is called in the program's grad mode (so its autograd node is recorded) and sets its own.
        modes, mode = [], prepared.grad_enabled
        for bsyms, _ in pieces:
            modes.append(mode)
            for b in bsyms:
                if b.sym.id == "prims.set_grad_enabled":
                    mode = bool(b.args[0])
        path = _Path()
        carrying = set(carrying_grad)
        for k in range(first, len(pieces)):
            bsyms, marker = pieces[k]
            seg = from_trace(prepared)
            seg.fn_name = f"segment{k}"
            # a value an earlier segment's node hands over with a gradient requires grad here, whatever its
            # metadata says (an op whose meta reads requires_grad from one argument only)
            seg.args = [p.replace(p.name, requires_grad=True) if p.name in carrying and not p.requires_grad else p
                        for p in uses[k].values()]
            seg.bound_symbols = list(bsyms)
            if modes[k] != prepared.grad_enabled:
                seg.bound_symbols.insert(0, prims.set_grad_enabled.bind(modes[k], output=None))
            defined = {o.name: o for b in bsyms for o in b.flat_proxy_outs}
            if marker is None:
                out_names, pre_names = [], []
                where = "the end of the program"
            else:
                outs = {p.name: p for p in marker.args}
                for later in uses[k + 1:]:
                    for name in later:
                        if name in defined:
                            outs.setdefault(name, defined[name])
                seg.output = tuple(outs.values())
                out_names = list(outs)
                pre_names = [p.name for p in pre_markers[k].args]
                read = reads[k]
                where = f"{read.what} at {read.location}"
            seg.provenance = TraceProvenance(f"Segment {k} of the program (up to {where})")
            more, backward_traces, split, run = self.jfn._compile_prepared(seg)
            path.traces += [seg, *more]
            path.backward_traces += backward_traces
            if split is not None:
                path.saved += tuple(split.saved)
            path.updated_inputs |= _updated_inputs(more[-1])
            segment = _Segment(run, [p.name for p in seg.args], out_names, pre_names,
                               reads[k] if marker is not None else None)
            # the grad mode it leaves is not the program's: the next segment is called in the program's
            segment.grad_mode = prepared.grad_enabled if k + 1 < len(modes) and modes[k + 1] != prepared.grad_enabled \
                else None
            segment.traces, segment.backward_traces = [seg, *more], backward_traces
            if split is not None and marker is not None:
                segment.carrying_grad = {out_names[i] for i in split.differentiable_outputs if i < len(out_names)}
                carrying |= segment.carrying_grad
            segment.saved = tuple(split.saved) if split is not None else ()
            path.segments.append(segment)
        return path

    def start(self, path: _Path, epilogue, prologue_trace, computation):
        """(the entry's computation, the entry's epilogue) for the first traced path."""
        self.root = path.segments[0]
        self.input_names = [p.name for p in computation.args]
        self.prologue_text = str(prologue_trace)
        self._link(path, epilogue, None)
        return _inputs_as_they_are, self.run

    def _link(self, path: _Path, epilogue, shown):
        for parent, child in zip(path.segments, path.segments[1:]):
            guard = parent.read.guard
            check = None if guard is None else (lambda values, guard=guard: guard(values[-1]))
            parent.children[parent.read.key] = [(check, None, (), child)]
        leaf = path.segments[-1]
        leaf.epilogue = epilogue
        leaf.path = shown

    # running -----------------------------------------------------------------------------------------------------
    def attach(self, entry):
        self.entry = entry
        leaf = self.root
        while leaf.children is not None:
            leaf = next(iter(leaf.children.values()))[0][3]
        leaf.path = (list(entry.computation_traces), list(entry.backward_traces), entry.saved_for_backward)
        self.shown = leaf

    def run(self, inputs, *args, **kwargs):
        env = dict(zip(self.input_names, inputs))
        node, values, visited = self.root, [], []
        while node.children is not None:
            visited.append(node)
            outs = node.run(*[env[n] for n in node.arg_names])
            if node.grad_mode is not None:
                torch._C._set_grad_enabled(node.grad_mode)
            env.update(zip(node.pre_names, outs))
            env.update(zip(node.out_names, outs))
            value = _CONVERSIONS[node.read.kind](outs[0])
            values.append(value)
            node = self._child(node, value, values, env, args, kwargs, visited)
        result = node.run(*[env[n] for n in node.arg_names])
        if node is not self.shown:
            self._show(node)
        return result if node.epilogue is None else node.epilogue(result, *args, **kwargs)

    def _child(self, node, value, values, env, args, kwargs, visited):
        children = node.children
        for check, prologue, names, child in children.get(_freeze(value), ()) or children.get(_ANY_SIZE, ()):
            if check is not None and not check(values):
                continue
            if prologue is None:
                return child
            inputs = prologue(*args, **kwargs)
            if inputs is not None:
                env.update(zip(names, inputs))
                return child
        return self._continue(node, values, env, args, kwargs, visited)

    def _show(self, leaf):
        self.shown = leaf
        entry = self.entry
        if entry is not None and leaf.path is not None:
            entry.computation_traces[:], entry.backward_traces[:], entry.saved_for_backward = leaf.path

    def _continue(self, node, values, env, args, kwargs, visited):
        """Traces the program again for the values read so far (the last one new) and compiles the segments
        after ``node``; the call goes on with them."""
        from thunder.frontend.cache import CACHE_OPTIONS
        from thunder.transforms.pipeline import prepare

        jfn = self.jfn
        start = time.perf_counter()
        computation, hooks, raised = jfn._trace(args, kwargs, known=values, env=env)
        epilogue_traces, _ = jfn._epilogue(computation, hooks, raised)
        traces = [computation, *prepare(computation)]
        reads = hooks.value_reader.reads
        first = len(values)
        if len(reads) < first or any(_freeze(r.value) != _freeze(v) for r, v in zip(reads, values)):
            raise UnsupportedError("internal error: tracing the program again for the values it read took another "
                                   "path; please file an issue")
        path = self.compile_path(traces[-1], computation, first, reads,
                                 set().union(*(s.carrying_grad for s in visited)))
        checks = jfn.cache_option is not CACHE_OPTIONS.SAME_INPUT
        prologue_traces = jfn._build_prologue(hooks, computation, len(args), tuple(kwargs), checks,
                                              bool(path.updated_inputs))
        prologue, names = None, ()
        if str(prologue_traces[-1]) != self.prologue_text:  # it reads other outside values: check them too
            prologue, names = prologue_traces[-1].python_callable(), [p.name for p in computation.args]
            inputs = prologue(*args, **kwargs)
            if inputs is None:
                raise AssertionError("internal error: the prologue rejected the arguments it was built from")
            env.update(zip(names, inputs))
        missing = [n for s in path.segments for n in s.arg_names
                   if n not in env and not any(n in t.out_names for t in path.segments)]
        if missing:
            raise UnsupportedError(
                f"internal error: the continuation traced for a new value read from tensor data needs "
                f"{', '.join(missing)}, which the segments before did not keep; please file an issue")
        epilogue = epilogue_traces[-1].python_callable() if epilogue_traces else None
        shown = (traces + [t for s in visited for t in s.traces] + path.traces,
                 [t for s in visited for t in s.backward_traces] + path.backward_traces,
                 sum((s.saved for s in visited), ()) + path.saved)
        self._link(path, epilogue, shown)
        read = reads[first - 1]
        self._add_child(node, read.key, (_sizes_check(reads[:first]), prologue, names, path.segments[0]))
        jfn.stats.continuations += 1
        jfn.stats.last_compile_seconds = time.perf_counter() - start
        return path.segments[0]

    def _add_child(self, node, key, variant):
        count = sum(len(v) for v in node.children.values())
        if count >= MAX_CONTINUATIONS:
            oldest = next(iter(node.children))
            node.children[oldest].pop(0)
            if not node.children[oldest]:
                del node.children[oldest]
            warnings.warn(
                f"thunder: the value read from tensor data ({node.read.what} at "
                f"{node.read.location}) took more than {MAX_CONTINUATIONS} values; each traces a new continuation "
                "of the program (the oldest is dropped). Keep it a tensor (torch.where, masks) if it changes on "
                "every call", ContinuationLimitWarning, stacklevel=4)
        node.children.setdefault(key, []).append(variant)


def _inputs_as_they_are(*inputs):
    return inputs
