"""Python values read from tensor data: the program is split into segments where it reads one.

While the program is traced, each read of a value records a ``segment_end`` marker (frontend/value_reads.py).
After tracing, the whole trace is made
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

import time
import warnings

import torch

from thunder.core import prims
from thunder.core.errors import UnsupportedError
from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.core.trace import from_trace
from thunder.frontend.autograd_function import passthrough_outputs
from thunder.frontend.inner_reads import check_inside, span_bound_symbols, spans
from thunder.frontend.segment_node import SegmentTape, one_node_possible
from thunder.frontend.size_guards import exact_where_constrained_later, size_read_guards, sizes_check
from thunder.frontend.value_reads import ANY_SIZE, CONVERSIONS, freeze, segment_end, uses

__all__ = ["ContinuationLimitWarning", "MAX_CONTINUATIONS", "READ_VALUES_INSIDE", "SegmentedProgram"]

MAX_CONTINUATIONS = 16
# Values read from tensor data that a segment can check where it reads them are read inside it (no split,
# frontend/inner_reads.py); False: each is read at a split (what a call falls back to).
READ_VALUES_INSIDE = True


class ContinuationLimitWarning(UserWarning):
    """A value read from tensor data took more than ``MAX_CONTINUATIONS`` values at one split."""


class _Segment:
    """One compiled segment. A segment that ends at a read has ``children``: read value -> the continuations
    traced for it, each ``(check or None, prologue or None, its input names, first segment)``; the last one has
    ``epilogue`` and ``path`` (what ``thunder.last_traces`` and friends show when the call ended there).
    ``pre_names``: (name before functionalization, name in the functional trace) of each value its marker keeps
    (what tracing a continuation again looks values up by)."""

    __slots__ = ("run", "arg_names", "out_names", "pre_names", "read", "convert", "children", "epilogue", "path",
                 "traces", "backward_traces", "saved", "grad_mode", "carrying_grad", "size_dims", "node", "flat_names",
                 "grad_names", "grad_arg_names", "arg_set", "spec", "passthrough", "mode_left", "made_names", "inner",
                 "inner_checks", "fallback", "runs", "restarts", "aliases")

    def __init__(self, run, arg_names, out_names, pre_names, read):
        self.run, self.arg_names, self.out_names, self.pre_names, self.read = run, arg_names, out_names, pre_names, read
        self.convert = CONVERSIONS[read.kind] if read is not None else None
        self.children = {} if read is not None else None
        self.epilogue = self.path = None
        self.aliases = ()  # (name, name of one of its outputs): a continuation's name for that output
        self.traces, self.backward_traces, self.saved = [], [], ()
        self.grad_mode = None  # the grad mode to call the next segment in, when this one leaves another
        self.carrying_grad = set()  # names of its outputs its autograd node hands over with a gradient
        self.size_dims = {}  # argument position -> the dimension of the tensor given there that is the argument
        # for one node of the whole call (frontend/segment_node.py): what its autograd node runs (None without one),
        # the names of its flat outputs, of those with a gradient, of its inputs taking one; the tree of the
        # outputs, the outputs that are inputs as they are; the grad mode it leaves in effect (None: the one it got);
        # the names of the outputs it makes (not its inputs handed on)
        self.node, self.flat_names, self.grad_names, self.grad_arg_names = None, [], frozenset(), []
        self.arg_set, self.spec, self.passthrough, self.mode_left = frozenset(arg_names), None, (), None
        self.made_names = frozenset()
        # values read inside it (no split, frontend/inner_reads.py): (the position of its output holding it, its
        # conversion) and (the read's index, the check made inside) of each; the segments split at those reads, which
        # a call runs where one of them fails its checks (None: no value read inside); how many calls ran it, and ran
        # the split ones instead
        self.inner, self.inner_checks, self.fallback, self.runs, self.restarts = [], [], None, 0, 0


class _Path:
    """The compiled segments of one trace of the program, from the first one compiled for it."""

    def __init__(self):
        self.segments: list[_Segment] = []
        self.traces: list = []
        self.backward_traces: list = []
        self.saved: tuple = ()
        self.updated_inputs: set[str] = set()
        self.written: set[str] = set()  # names of the inputs its segments write (before lowering: copy_to_out_)


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
        self.written_inputs: list[int] = []  # positions of the inputs some segment writes in place
        self._versions_when_traced: dict[int, int] = {}  # of those a continuation added, when it was traced

    # compiling ---------------------------------------------------------------------------------------------------
    def compile_path(self, prepared, computation, first: int = 0, reads=None, carrying_grad=()) -> _Path:
        """Compiles the pieces of ``prepared`` (functional, with markers) from the ``first``-th on;
        ``carrying_grad``: names the segments before hand over as differentiable outputs of their autograd node."""
        from thunder.core.trace import TraceProvenance
        from thunder.frontend.jit import _updated_inputs
        from thunder.frontend.owned_buffers import updatable_in_place
        from thunder.transforms.overwrites import shared_memory
        from thunder.transforms.saved_versions import modified_saved_values

        reads = reads if reads is not None else self.reads
        size_read_guards(computation, reads)
        constraints_before_lowering = len(computation.constraints)
        pieces = _pieces(prepared)
        pre_markers = [b for b in computation.bound_symbols if b.sym is segment_end]
        if len(pieces) - 1 != len(reads) or len(pre_markers) != len(reads):
            raise UnsupportedError("internal error: the program's splits changed while it was compiled; please "
                                   "file an issue")
        flat_output = [p for p in tree_flatten(prepared.output)[0] if isinstance(p, Proxy)]
        fails_in_backward = modified_saved_values(computation)
        # A segment takes what its ops read (and the read value it ends with) and hands over what it defines that
        # the segments after may use: what their ops read, and what their markers keep for continuations traced
        # later. A value made before it is not handed through it: the runtime keeps every value by name.
        used = [uses(bsyms, marker.args[:1] if marker is not None else flat_output) for bsyms, marker in pieces]
        kept = [[p.name for p in marker.args] if marker is not None else [] for _, marker in pieces]
        # grad mode where each piece starts: a split inside a no_grad region starts the next segment with grad off.
        # Each segment is called in the program's grad mode (so its autograd node is recorded) and sets its own.
        modes, mode = [], prepared.grad_enabled
        for bsyms, _ in pieces:
            modes.append(mode)
            for b in bsyms:
                if b.sym.id == "prims.set_grad_enabled":
                    mode = bool(b.args[0])
        writable = updatable_in_place(prepared)
        path = _Path()

        def compile_span(k0, k1, carrying) -> _Segment:
            """Pieces ``k0`` to ``k1`` as one segment: the sizes read at the splits between them are read inside it
            (no split) and checked there (``read_guard``)."""
            bsyms, inner = span_bound_symbols(pieces, reads, k0, k1)
            marker = pieces[k1][1]
            args = used[k0] if k0 == k1 else uses(bsyms, marker.args[:1] if marker is not None else flat_output)
            seg = from_trace(prepared)
            seg.fn_name = f"segment{k0}"
            # a value an earlier segment's node hands over with a gradient requires grad here, whatever its
            # metadata says (an op whose meta reads requires_grad from one argument only)
            seg.args = [p.replace(p.name, requires_grad=True) if p.name in carrying and not p.requires_grad else p
                        for p in args.values()]
            seg.bound_symbols = bsyms
            # views an earlier segment made hand over memory shared with other inputs: executors must know
            seg.input_memory = shared_memory(prepared.bound_symbols, [p.name for p in seg.args])
            seg.owned_inputs = frozenset(p.name for p in seg.args if p.name in writable)
            if modes[k0] != prepared.grad_enabled:
                seg.bound_symbols.insert(0, prims.set_grad_enabled.bind(modes[k0], output=None))
            defined = {o.name: o for b in bsyms for o in b.flat_proxy_outs}
            defined.update((o.name, o) for b in bsyms for d in b.number_definitions() for o in d.flat_proxy_outs)
            if marker is None:
                out_names, pre_names = [], []
                where = "the end of the program"
            else:
                outs = {marker.args[0].name: marker.args[0]}  # the read value first: the runtime converts it
                outs.update((p.name, p) for p in inner)  # then the sizes read inside: the values read so far
                for later in (kept[k1], *used[k1 + 1:], *kept[k1 + 1:]):
                    for name in later:
                        if name in defined:
                            outs.setdefault(name, defined[name])
                seg.output = tuple(outs.values())
                out_names = list(outs)
                # each value the marker carries, by its name before functionalization -> its name in the segment's
                # outputs (which hold each name once: ``v.copy_(x)`` makes v and x one value)
                pre_names = [(p.name, q.name) for p, q in zip(pre_markers[k1].args, marker.args)]
                read = reads[k1]
                where = f"{read.what} at {read.location}"
            inside = f"; {k1 - k0} value{'s' if k1 - k0 > 1 else ''} read inside" if k1 > k0 else ""
            seg.provenance = TraceProvenance(f"Segment {k0} of the program (up to {where}{inside})")
            # the last segment's node returns the temporaries several outputs are views of, as the program's
            # (the views made again outside it may then be updated as eager's)
            more, backward_traces, split, run, node = self.jfn._compile_prepared(
                seg, fails_in_backward=fails_in_backward, returns_view_bases=marker is None, constrain=computation)
            path.updated_inputs |= _updated_inputs(more[-1])
            path.written |= _updated_inputs(seg) | _updated_inputs(more[-1])
            segment = _Segment(run, [p.name for p in seg.args], out_names, pre_names,
                               reads[k1] if marker is not None else None)
            segment.inner = [(out_names.index(p.name), CONVERSIONS[reads[k].kind]) for k, p in zip(range(k0, k1), inner)] \
                if marker is not None else []
            segment.inner_checks = [(k, check_inside(reads[k])) for k in range(k0, k1)]
            # the grad mode it leaves is not the program's: the next segment is called in the program's
            segment.grad_mode = prepared.grad_enabled if k1 + 1 < len(modes) and modes[k1 + 1] != prepared.grad_enabled \
                else None
            segment.traces, segment.backward_traces = [seg, *more], backward_traces
            if split is not None and marker is not None:
                segment.carrying_grad = {out_names[i] for i in split.differentiable_outputs if i < len(out_names)}
                carrying |= segment.carrying_grad
            segment.saved = tuple(split.saved) if split is not None else ()
            _describe_for_one_node(segment, seg, split, node)
            return segment

        carrying = set(carrying_grad)
        for k0, k1 in spans(pieces, reads, first, READ_VALUES_INSIDE):
            before = set(carrying)
            segment = compile_span(k0, k1, carrying)
            if k1 > k0:  # the same pieces split at each read: what a call runs where a size fails its checks
                segment.fallback = [compile_span(k, k, before) for k in range(k0, k1 + 1)]
                carrying |= before
            path.segments.append(segment)
        exact_where_constrained_later(computation, reads, constraints_before_lowering)
        # a size lowering then needed exactly is read at a split: the segment reading it inside gives way to the split
        path.segments = [s for m in path.segments for s in (
            m.fallback if any(check_inside(reads[k]) != check for k, check in m.inner_checks) else (m,))]
        for segment in path.segments:
            path.traces += segment.traces
            path.backward_traces += segment.backward_traces
            path.saved += segment.saved
        return path

    def start(self, path: _Path, epilogue, prologue_trace, computation):
        """(the entry's computation, the entry's epilogue) for the first traced path."""
        self.root = path.segments[0]
        self.input_names = [p.name for p in computation.args]
        self.prologue_text = str(prologue_trace)
        self.written_inputs = [i for i, n in enumerate(self.input_names) if n in path.written]
        self._link(path, epilogue, None)
        return _inputs_as_they_are, self.run

    def _link(self, path: _Path, epilogue, shown):
        for parent, child in zip(path.segments, path.segments[1:]):
            _link_next(parent, child)
        for segment in path.segments:
            if segment.fallback is not None:  # the split segments lead to where the one reading inside leads
                for parent, child in zip(segment.fallback, segment.fallback[1:]):
                    _link_next(parent, child)
                segment.fallback[-1].children = segment.children
        leaf = path.segments[-1]
        leaf.epilogue, leaf.path = epilogue, shown
        if leaf.fallback is not None:
            leaf.fallback[-1].epilogue = epilogue
            leaf.fallback[-1].path = None if shown is None else _split_shown(shown, path.segments)

    # running -----------------------------------------------------------------------------------------------------
    def attach(self, entry):
        self.entry = entry
        leaf, walked = self.root, [self.root]
        while leaf.children is not None:
            leaf = next(iter(leaf.children.values()))[0][3]
            walked.append(leaf)
        leaf.path = (list(entry.computation_traces), list(entry.backward_traces), entry.saved_for_backward)
        if leaf.fallback is not None:
            leaf.fallback[-1].path = _split_shown(leaf.path, walked)
        self.shown = leaf

    def run(self, inputs, *args, **kwargs):
        # a segment raising (eager's error from tensor data) before any input was updated: the effects made before
        # the failing op (an input's t_(), done by the epilogue) are eager's to make, as for an unsegmented program.
        # Only the inputs some segment writes can change (a continuation traced during the call adds its own).
        written = [inputs[i] for i in self.written_inputs]
        versions = tensor_versions(written)
        try:
            result, node = self._run_segments(inputs, args, kwargs)
        except Exception as error:
            if len(self.written_inputs) != len(written):  # a continuation writing more inputs was traced meanwhile
                written, versions = self._written_after_tracing(inputs, written, versions)
            if not self.jfn.may_run_eagerly_after(error, written, versions):
                raise
            failed = error
        else:
            return result if node.epilogue is None else node.epilogue(result, *args, **kwargs)
        return self.jfn.run_eagerly_after(failed, args, kwargs)

    def _written_after_tracing(self, inputs, written, versions):
        """The written inputs and their versions at the call's start, where continuations traced during the call
        write inputs the call's start did not know of: those ran only after they were traced."""
        more = self.written_inputs[len(written):]
        return written + [inputs[i] for i in more], versions + [self._versions_when_traced.get(i) for i in more]

    def _run_segments(self, inputs, args, kwargs):
        tape = SegmentTape() if one_node_possible() else None
        # A segment reading sizes inside runs only into the call's one node (a restart leaves nothing behind): where
        # a size fails its checks, the call runs again from the start on the segments split at that read. Where
        # that happens on most calls, the split segments are run from then on.
        split_at = set() if tape is not None else None
        while True:
            try:
                return self._run_path(inputs, args, kwargs, tape, split_at)
            except _Restart as restart:
                restart.segment.restarts += 1
                self.jfn.stats.size_restarts += 1
                split_at.add(restart.segment)
                tape = SegmentTape()

    def _run_path(self, inputs, args, kwargs, tape, split_at):
        env = dict(zip(self.input_names, inputs))
        grad_mode = torch.is_grad_enabled()
        try:
            node, values, visited = _chosen(self.root, split_at), [], []
            while node.children is not None:
                visited.append(node)
                outs = _run_checked(node, env, tape)
                if tape is not None:
                    torch._C._set_grad_enabled(grad_mode)
                elif node.grad_mode is not None:
                    torch._C._set_grad_enabled(node.grad_mode)
                env.update(zip(node.out_names, outs))
                if node.aliases:
                    env.update((alias, env[name]) for alias, name in node.aliases)
                values.extend(convert(outs[i]) for i, convert in node.inner)
                if getattr(outs[0], "is_cuda", False) and torch.cuda.is_current_stream_capturing():
                    raise _read_while_capturing(node.read)
                value = node.convert(outs[0])
                values.append(value)
                node = _chosen(self._child(node, value, values, env, args, kwargs, visited), split_at)
            if tape is None:
                result = _run(node, env, None)
            elif node.fallback is None:
                result = self._finish(node, env, tape, grad_mode)
            else:
                try:
                    result = self._finish(node, env, tape, grad_mode)
                except Exception as error:
                    raise _Restart(node) from error
        except BaseException:
            torch._C._set_grad_enabled(grad_mode)
            raise
        if node is not self.shown:
            self._show(node)
        return result, node

    @staticmethod
    def _finish(leaf, env, tape, grad_mode):
        """The last segment run into the call's one autograd node (frontend/segment_node.py): the program's
        output."""
        args = _args(leaf, env)
        flat = tape.run(leaf, args)
        if leaf.node is None:
            flat, spec = tree_flatten(flat)
        else:
            spec = leaf.spec
            if leaf.passthrough:
                flat = list(flat)
                for k, i in leaf.passthrough:
                    flat[k] = args[i]
        flat = tape.finish(flat, leaf.flat_names, env, grad_mode)
        torch._C._set_grad_enabled(grad_mode if leaf.mode_left is None else leaf.mode_left)
        return tree_unflatten(flat, spec)

    def _child(self, node, value, values, env, args, kwargs, visited):
        children = node.children
        for check, prologue, names, child in children.get(freeze(value), ()) or children.get(ANY_SIZE, ()):
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
        # tracing sees the values the splits kept under the names it gives them before functionalization; the
        # segments take them by their names in the functional trace. The two namespaces stay apart: a name may be
        # both (CSE merged v5 = torch.tensor(s) into an equal v1 updated later, whose first name is the merged one's:
        # fuzz seed 433913)
        traced_env = dict(env)
        for s in visited:
            traced_env.update([(pre, env[name]) for pre, name in s.pre_names])
        computation, hooks, raised = jfn._trace(args, kwargs, known=values, env=traced_env)
        epilogue_traces, _ = jfn._epilogue(computation, hooks, raised)
        traces = [computation, *prepare(computation)]
        reads = hooks.value_reader.reads
        first = len(values)
        if len(reads) < first or any(freeze(r.value) != freeze(v) for r, v in zip(reads, values)):
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
        segments = [s for m in path.segments for s in (m, *(m.fallback or ()))]
        missing = [n for s in segments for n in s.arg_names
                   if n not in env and not any(n in t.out_names for t in segments)]
        missing = _sizes_from_tensors(traces[-1], env, segments, missing)
        missing = _stores_into_kept(traces[-1], env, segments, missing)
        missing = _kept_under_another_name(computation, traces[-1], visited, segments, env, missing)
        if missing:
            raise UnsupportedError(
                f"internal error: the continuation traced for a new value read from tensor data needs "
                f"{', '.join(missing)}, which the segments before did not keep; please file an issue")
        epilogue = epilogue_traces[-1].python_callable() if epilogue_traces else None
        shown = (traces + [t for s in visited for t in s.traces] + path.traces,
                 [t for s in visited for t in s.backward_traces] + path.backward_traces,
                 sum((s.saved for s in visited), ()) + path.saved)
        self._link(path, epilogue, shown)
        for i, n in enumerate(self.input_names):
            if n in path.written and i not in self.written_inputs and isinstance(env.get(n), torch.Tensor):
                self.written_inputs.append(i)
                self._versions_when_traced[i] = env[n]._version
        read = reads[first - 1]
        self._add_child(node, read.key, (sizes_check(reads[:first]), prologue, names, path.segments[0]))
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


def _read_while_capturing(read) -> UnsupportedError:
    return UnsupportedError(
        f"{read.what} at {read.location} needs a value read from the device's tensor data, which cannot be read while "
        "a CUDA graph is captured (the read waits for the device, and a replay would not read it again): keep it a "
        "tensor (torch.where, masks, torch.nonzero_static), or capture only the parts of the program before and "
        "after the read")


class _Restart(Exception):
    """A segment reading sizes inside raised (a size failed its checks, or an op the sizes misled): the call runs
    again on the segments split at its reads."""

    def __init__(self, segment):
        super().__init__()
        self.segment = segment


# A segment reading sizes inside gives way to the split ones for good after this many restarts, where they are more
# than half of its calls (a size failing its checks on most calls: a restart costs more than the splits).
MIN_RESTARTS = 8


def _chosen(segment, split_at):
    """``segment``, or the first of the split segments standing for it in this call (None: no restart possible)."""
    if segment.fallback is None:
        return segment
    if split_at is None or segment in split_at or (segment.restarts >= MIN_RESTARTS
                                                   and 2 * segment.restarts > segment.runs):
        return segment.fallback[0]
    segment.runs += 1
    return segment


def _run_checked(segment, env, tape):
    if segment.fallback is None:
        return _run(segment, env, tape)
    try:
        return _run(segment, env, tape)
    except Exception as error:
        raise _Restart(segment) from error


def _split_shown(shown, path) -> tuple:
    """``shown`` (traces, backward traces, saved values: what ``thunder.last_traces`` and friends show) where the
    segments of ``path`` reading sizes inside gave way to the segments split at each read."""
    traces, backward, saved = list(shown[0]), list(shown[1]), list(shown[2])
    for segment in path:
        if segment.fallback is None:
            continue
        for shown_list, attr in ((traces, "traces"), (backward, "backward_traces"), (saved, "saved")):
            own = list(getattr(segment, attr))
            at = next((i for i, t in enumerate(shown_list) if own and t is own[0]), None)
            if at is not None:
                shown_list[at:at + len(own)] = [t for s in segment.fallback for t in getattr(s, attr)]
    return traces, backward, tuple(saved)


def _link_next(parent, child) -> None:
    """``child`` runs after ``parent`` for the value ``parent`` read when traced (for any size its guard accepts)."""
    guard = parent.read.guard
    check = None if guard is None or not guard.checks else (lambda values, guard=guard: guard(values[-1]))
    parent.children[parent.read.key] = [(check, None, (), child)]


def _sizes_from_tensors(trace, env, segments, missing: list) -> list:
    """Tracing again may name a size anew where the first trace had merged two equal ones (``cat([t, t])`` twice),
    so a continuation may need a size the segments before did not hand over by that name: where it is a size of a
    tensor they did hand over, the segment takes that tensor and reads the size from it on each call. Returns the
    names still missing."""
    found: dict[str, tuple[str, int]] = {}
    for p in [*trace.args, *(o for b in trace.bound_symbols for o in b.flat_proxy_outs)] if missing else ():
        if isinstance(p, TensorProxy) and isinstance(env.get(p.name), torch.Tensor):
            for d, size in enumerate(p.shape):
                if isinstance(size, Proxy) and size.name in missing:
                    found.setdefault(size.name, (p.name, d))
    for s in segments:
        dims = {i: found[n][1] for i, n in enumerate(s.arg_names) if n in found}
        if dims:
            s.arg_names = [found[n][0] if n in found else n for n in s.arg_names]
            s.arg_set = frozenset(s.arg_names)
            s.size_dims = {**s.size_dims, **dims}
    return [n for n in missing if n not in found]


def _stores_into_kept(trace, env, segments, missing: list) -> list:
    """A value a segment before stored into a tensor in place (``t17 = copy_to_out_(t16, out=t1)``, an update of
    an input through a view) is that tensor, which every call holds (the first trace named the stored value
    otherwise): the segments take the tensor by its name. Returns the names still missing."""
    stored: dict[str, str] = {}
    for b in trace.bound_symbols if missing else ():
        out = b.kwargs.get("out") if b.sym.id == "prims.copy_to_out_" else None
        if out is not None and out.name in env:
            stored.update((o.name, out.name) for o in b.flat_proxy_outs if o.name in missing)
    for s in segments:
        s.arg_names = [stored.get(n, n) for n in s.arg_names]
    return [n for n in missing if n not in stored]


def _kept_under_another_name(computation, functional, visited, segments, env, missing: list) -> list:
    """A value an earlier read's marker keeps that this trace's functionalization named otherwise than the first
    trace's (the update of a view's base: ``t20`` here, ``t19`` there; fuzz seed 655557): the same value before
    functionalization, carried by both traces' markers at the same position. The new segments take it under an
    alias the segment that made it sets on every call (the first trace's name may mean another value in this
    trace). Only a value without a gradient: the gradients of the segments are routed by name. Returns the names
    still missing."""
    if not missing:
        return missing
    pre_markers = [b for b in computation.bound_symbols if b.sym is segment_end]
    markers = [b for b in functional.bound_symbols if b.sym is segment_end]
    renamed = {}
    for segment, pre, marker in zip(visited, pre_markers, markers):
        first = dict(segment.pre_names)  # before functionalization -> the first trace's name, a key of env
        for p, q in zip(pre.args, marker.args):
            name = first.get(p.name) if isinstance(p, Proxy) else None
            value = env.get(name)
            if (not isinstance(q, Proxy) or q.name not in missing or name is None or value is None
                    or getattr(value, "requires_grad", False)):
                continue
            alias = f"{name}:kept"  # no proxy's name: nothing a segment outputs overwrites it
            if (alias, name) not in segment.aliases:
                segment.aliases = (*segment.aliases, (alias, name))
            env[alias] = value
            renamed[q.name] = alias
    for s in segments:
        s.arg_names = [renamed.get(n, n) for n in s.arg_names]
    return [n for n in missing if n not in renamed]


def _args(segment, env) -> list:
    """The arguments of ``segment`` in this call: the values of its argument names; at each position in its
    ``size_dims``, that size of the tensor named there."""
    args = [env[n] for n in segment.arg_names]
    for i, d in segment.size_dims.items():
        args[i] = args[i].shape[d]
    return args


def _run(segment, env, tape):
    """Runs ``segment`` on its arguments in ``env``: as its own autograd node, or into the call's ``tape``."""
    args = _args(segment, env)
    return segment.run(*args) if tape is None else tape.run(segment, args)


def _describe_for_one_node(segment: _Segment, trace, split, node) -> None:
    """What running ``segment`` as part of one node for the whole call needs to know (frontend/segment_node.py);
    ``trace``: the segment's trace before the autograd split, ``split`` and ``node`` its split and autograd node's
    compiled parts (None where no gradient flows through it)."""
    modes = [bool(b.args[0]) for b in trace.bound_symbols if b.sym.id == "prims.set_grad_enabled"]
    segment.mode_left = modes[-1] if modes else None
    flat = split.forward.output[0] if split is not None else tree_flatten(trace.output)[0]
    segment.flat_names = [getattr(p, "name", None) for p in flat]
    args = {p.name for p in trace.args if isinstance(p, Proxy)}
    segment.made_names = frozenset(n for n in segment.flat_names if n is not None and n not in args)
    if node is None:
        return
    segment.node = node
    segment.grad_names = frozenset(segment.flat_names[i] for i in node.differentiable_outputs)
    segment.grad_arg_names = [segment.arg_names[i] for i in node.differentiable_inputs]
    segment.spec, segment.passthrough = split.output_spec, passthrough_outputs(split)


def tensor_versions(inputs) -> list:
    """The version counters of the tensors among ``inputs``: an update in place bumps its tensor's."""
    return [x._version for x in inputs if isinstance(x, torch.Tensor)]


def _inputs_as_they_are(*inputs):
    return inputs
