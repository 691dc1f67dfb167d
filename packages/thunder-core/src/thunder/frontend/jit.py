"""``thunder.jit``: interpret, trace, transform, compile, cache.

A jitted callable keeps a list of cache entries. A call runs each entry's prologue until one accepts
the arguments (returns the computation's inputs) and runs that entry's computation; if none does,
the function is traced again and a new entry is added.
"""

from __future__ import annotations

import functools
import time
import warnings

import torch

from thunder.core.errors import UnsupportedError
from thunder.core.proxies import Proxy
from thunder.core.pytree import tree_flatten
from thunder.core.trace import TraceCtx, TraceProvenance, tracectx
from thunder.core.trace_checks import check_trace
from thunder.extend import get_executor, resolve_executors
from thunder.frontend.autograd_function import bases_of_returned_views, differentiable_computation
from thunder.frontend.cache import CACHE_OPTIONS, CacheEntry, resolve_cache_option
from thunder.frontend.epilogue import build_epilogue, needs_epilogue
from thunder.frontend.hooks import JitHooks, made_while_grad_disabled, source_location, user_source_location
from thunder.frontend.options import DebugOptions, resolve_cache_alias, resolve_langctx
from thunder.frontend.prologue import build_prologue, state_tensors
from thunder.frontend.raised import exception_template, is_program_exception, with_plain_numbers
from thunder.frontend.recompiles import RECOMPILE_WARNING_LIMIT, record_miss
from thunder.frontend.segments import SegmentedProgram, tensor_versions
from thunder.frontend.tensor_guards import group_tensor_checks
from thunder.frontend.value_reads import ValueReader
from thunder.interpreter import interpret
from thunder.torch.view_updates import ViewVersions
from thunder.transforms.autograd import ForwardBackward, requires_grad, split_forward_backward
from thunder.transforms.cse import cse
from thunder.transforms.dispatch import dispatch_to_executors
from thunder.transforms.overwrites import snapshot_saved_values
from thunder.transforms.pipeline import lower, prepare
from thunder.transforms.remat import rematerialize
from thunder.transforms.reshape_chains import fold_reshape_chains
from thunder.transforms.saved_versions import modified_saved_values
from thunder.transforms.transform import split_transforms

__all__ = ["jit", "ThunderFunction", "CompileStats"]

_SHARP_EDGES = (None, "allow", "warn", "error")


class CompiledProgramFailedWarning(UserWarning):
    """A compiled program raised where eager's run of the same call did not (a thunder bug): the call ran eagerly."""


class CompileStats:
    """Counters and timings of one jitted callable (``thunder.compile_stats(jfn)``)."""

    def __init__(self):
        self.cache_hits = 0
        self.cache_misses = 0
        self.last_compile_seconds: float | None = None
        self.last_interpretation_seconds: float | None = None
        self.last_entry: CacheEntry | None = None
        self.recompiles = 0  # misses while entries existed
        self.misses: list = []  # the latest CacheMiss records (thunder.frontend.recompiles)
        self.warned_recompiles = False
        # continuations traced for a new value read from tensor data (frontend/segments.py)
        self.continuations = 0
        # calls run again on the segments split at each size read, where a size read inside a segment failed the
        # checks it was traced under (frontend/segments.py)
        self.size_restarts = 0

    @property
    def calls(self) -> int:
        return self.cache_hits + self.cache_misses  # every call is one or the other: one counter less per call

    @property
    def last_traces(self) -> list[TraceCtx]:
        return list(self.last_entry.computation_traces) if self.last_entry else []

    @property
    def last_prologue_traces(self) -> list[TraceCtx]:
        return list(self.last_entry.prologue_traces) if self.last_entry else []

    @property
    def last_backward_traces(self) -> list[TraceCtx]:
        """Empty when the call needed no backward (no input requires grad, or grad mode was off)."""
        return list(self.last_entry.backward_traces) if self.last_entry else []

    @property
    def last_saved_for_backward_bytes(self) -> int:
        """Bytes of the tensors the last call's forward saves for backward (sizes as traced)."""
        from thunder.transforms.autograd import saved_bytes

        return saved_bytes(self.last_entry.saved_for_backward) if self.last_entry else 0

    @property
    def last_epilogue_traces(self) -> list[TraceCtx]:
        """Empty when the program has no side effects on outside state (then no epilogue runs)."""
        return list(self.last_entry.epilogue_traces) if self.last_entry else []

    def __repr__(self) -> str:
        return (f"CompileStats(calls={self.calls}, cache_hits={self.cache_hits}, cache_misses={self.cache_misses}, "
                f"last_compile_seconds={self.last_compile_seconds})")


class ThunderFunction:
    """What ``thunder.jit(fn)`` returns for a function (modules get :class:`thunder.ThunderModule`)."""

    def __init__(self, fn, *, executors=None, cache=None, sharp_edges=None, disable_inplace_copy_check=False,
                 transforms=None, debug_options=None, disable_torch_autograd=False, **compile_options):
        if sharp_edges not in _SHARP_EDGES:
            raise ValueError(f"sharp_edges must be one of 'allow', 'warn', 'error', got {sharp_edges!r}")
        self.checkpoint = _checkpoint_predicate(compile_options.pop("checkpoint", None))
        cache = resolve_cache_alias(cache, compile_options.pop("cache_mode", None))
        resolve_langctx(compile_options.pop("langctx", None))
        # Kept for lightning-thunder code; neither changes what runs (docs/coming-from-lightning-thunder.md): there
        # is no preprocessing step to disable, and functionalization always keeps every alias of an updated
        # tensor correct, so there are no alias updates whose skipping would be safe.
        compile_options.pop("disable_preprocessing", None)
        compile_options.pop("skip_inplace_alias_updates", None)
        self.recompile_warning_limit = compile_options.pop("recompile_warning_limit", RECOMPILE_WARNING_LIMIT)
        if compile_options:
            raise TypeError(f"thunder.jit got unknown options: {', '.join(sorted(compile_options))}")
        if debug_options is not None and not isinstance(debug_options, DebugOptions):
            raise TypeError(f"debug_options= takes a thunder.DebugOptions, got {type(debug_options).__name__}")
        self.debug_options = debug_options if debug_options is not None else DebugOptions()
        self.disable_torch_autograd = bool(disable_torch_autograd)
        self.fn = fn
        self.executors = resolve_executors(executors)
        self.cache_option = resolve_cache_option(cache)
        self.sharp_edges = sharp_edges
        self.disable_inplace_copy_check = disable_inplace_copy_check
        self.transforms = tuple(transforms or ())
        self.transform_objects, self.trace_transforms = split_transforms(self.transforms)
        self.entries: list[CacheEntry] = []
        # callable -> replacement run natively while interpreting (set by recipes: thunder.compile)
        self.lookasides: dict = {}
        self.stats = CompileStats()
        self.__wrapped__ = fn
        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            if hasattr(fn, attr):
                try:
                    setattr(self, attr, getattr(fn, attr))
                except (AttributeError, TypeError):
                    pass

    def __call__(self, *args, **kwargs):
        stats = self.stats
        for entry in self.entries:
            try:
                inputs = entry.prologue(*args, **kwargs)
            except Exception:  # an unreachable path (missing attribute, short list) is a miss, not an error
                inputs = None
            if inputs is not None:
                stats.cache_hits += 1
                stats.last_entry = entry
                if entry is not self.entries[0]:
                    # the entry that accepted the last call is tried first next time (a decode loop's entry,
                    # not the prefill's); entries accept disjoint or equally valid calls, so order is free
                    self.entries.remove(entry)
                    self.entries.insert(0, entry)
                if entry.epilogue is not None:
                    return self._run_with_epilogue(entry, inputs, args, kwargs)
                try:
                    return entry.computation(*inputs)
                except Exception as error:  # the hot path pays nothing for this (zero-cost exceptions)
                    return self._after_failure(entry, error, args, kwargs)
        stats.cache_misses += 1
        if self.entries:
            record_miss(self, args, kwargs)  # why each entry rejected the call; warns past the recompile limit
        entry, inputs, raised = self._compile(args, kwargs)
        if self.cache_option is not CACHE_OPTIONS.NO_CACHING and (raised is None or entry.reraises):
            self.entries.append(entry)
        stats.last_entry = entry
        if entry.epilogue is None:
            try:
                return entry.computation(*inputs)
            except Exception as error:
                return self._after_failure(entry, error, args, kwargs)
        if raised is None:
            return self._run_with_epilogue(entry, inputs, args, kwargs)
        # The program raised while traced: the entry does what came before the raise, then raises a copy.
        # This call raises the very exception the program made (its traceback shows the program's frames).
        try:
            entry.epilogue(entry.computation(*inputs), *args, **kwargs)
        except type(raised):
            pass
        raise raised

    def _after_failure(self, entry, error, args, kwargs):
        """The computation of an entry without epilogue raised ``error``: where the user's code may catch it (it has
        an exception handler), it is the program's kind of exception and no input was updated, the call runs eagerly
        (see :meth:`_run_with_epilogue`); else ``error`` stands: eager's own error from tensor data, an error a
        transform's check raises, or the program's own error an entry re-raises by design."""
        if (not entry.catches_errors or entry.written_inputs or entry.reraises
                or not is_program_exception(error)):
            raise error
        return self.run_eagerly_after(error, args, kwargs)

    def _run_with_epilogue(self, entry, inputs, args, kwargs):
        """The computation, then the epilogue's writes. Where the computation raises (eager's error from tensor
        data: an index out of range) before it updated any input, the side effects the program made before the
        failing op would be lost with the epilogue: the call runs eagerly instead, which makes them and raises
        eager's error. Where eager does not fail (the program catches that error: ``try: x[idx] except
        IndexError``, which tracing could not see fail), eager's result, with a warning that names the error."""
        written = [inputs[i] for i in entry.written_inputs]
        versions = tensor_versions(written)
        try:
            values = entry.computation(*inputs)
        except Exception as error:
            if not self.may_run_eagerly_after(error, written, versions):
                raise
            failed = error
        else:
            return entry.epilogue(values, *args, **kwargs)
        return self.run_eagerly_after(failed, args, kwargs)

    @staticmethod
    def may_run_eagerly_after(error, inputs, versions) -> bool:
        """The compiled computation raised ``error`` (the program's kind of exception) before it updated an input: the
        call may run eagerly instead (see :meth:`_run_with_epilogue`)."""
        return is_program_exception(error) and versions == tensor_versions(inputs)

    def run_eagerly_after(self, error, args, kwargs):
        """Eager's result or error (outside the handler of ``error``: eager's error has no context eager lacks)."""
        result = self.fn(*args, **kwargs)
        warnings.warn(f"thunder's compiled {self.__name__} raised {type(error).__name__}: {error} where eager runs; "
                      "this call ran eagerly. If the program catches that error (an op failing on tensor data inside "
                      "a try block), this is expected; otherwise please file an issue.", CompiledProgramFailedWarning,
                      stacklevel=4)
        return result

    def __repr__(self) -> str:
        return f"thunder.jit({self.fn!r})"

    # compilation ---------------------------------------------------------------------------------
    def _compile(self, args, kwargs) -> tuple[CacheEntry, tuple, BaseException | None]:
        """(the entry, the computation's inputs for this call, the exception the program raised or None)."""
        start = time.perf_counter()
        computation, hooks, raised = self._trace(args, kwargs)
        epilogue_traces, template = self._epilogue(computation, hooks, raised)
        interpreted = time.perf_counter()
        traces = [computation]
        traces += prepare(computation)
        kwnames = tuple(kwargs)
        checks = self.cache_option is not CACHE_OPTIONS.SAME_INPUT
        transformed_prologue = None
        if self.transform_objects:
            _refuse_whole_program_hooks_on_segments(self.transform_objects, hooks.value_reader.reads)
            # the inputs updated in place are known from the functionalized trace already (its copies into them)
            assumed_updates = bool(_updated_inputs(traces[-1]))
            raw = self._prologue_trace(hooks, computation, len(args), kwnames, checks, assumed_updates)
            transformed_prologue, transformed, epilogue_traces = self._pre_prologue_transforms(raw, traces[-1],
                                                                                               epilogue_traces)
            if transformed is not traces[-1]:
                traces.append(transformed)
        before_lowering = traces[-1]
        if hooks.value_reader.reads:  # the program reads values from tensor data: it runs as segments
            program = SegmentedProgram(self, hooks.value_reader.reads)
            path = program.compile_path(traces[-1], computation)
            traces += path.traces
            backward_traces, split, updated_inputs = path.backward_traces, None, path.updated_inputs
        else:
            more, backward_traces, split, computation_fn, _ = self._compile_prepared(
                before_lowering, inputs=_traced_values(hooks, computation), restrided_inputs=hooks.restrided_inputs,
                fails_in_backward=modified_saved_values(computation), returns_view_bases=True, constrain=computation)
            traces += more
            updated_inputs = _updated_inputs(traces[-1])
        if updated_inputs:
            _refuse_aliased_updates(hooks, updated_inputs)
        if transformed_prologue is not None and bool(updated_inputs) != assumed_updates:
            # the transforms see (and may change) the prologue that runs
            raw = self._prologue_trace(hooks, computation, len(args), kwnames, checks, bool(updated_inputs))
            transformed_prologue, _, _ = self._pre_prologue_transforms(raw, before_lowering, epilogue_traces)
        prologue_traces = self._build_prologue(hooks, computation, len(args), kwnames, checks, bool(updated_inputs),
                                               prologue=transformed_prologue)
        prologue = prologue_traces[0]
        if self.debug_options.check_traces:
            for steps in (prologue_traces, traces, backward_traces, epilogue_traces):
                for i, t in enumerate(steps):
                    check_trace(t, runs=i == len(steps) - 1)
        prologue_fn = prologue_traces[-1].python_callable()
        epilogue_fn = epilogue_traces[-1].python_callable() if epilogue_traces else None
        saved = tuple(split.saved) if split is not None else ()
        if hooks.value_reader.reads:
            computation_fn, epilogue_fn = program.start(path, epilogue_fn, prologue_traces[-1], computation)
            saved = path.saved
        seconds = time.perf_counter() - start
        entry = CacheEntry(prologue_fn, computation_fn, epilogue_fn, prologue_traces, traces, epilogue_traces, seconds,
                           backward_traces, saved, reraises=template is not None)
        entry.catches_errors = hooks.catches_errors
        if not hooks.value_reader.reads:
            # every update of an input is a copy_to_out_ before lowering (which may turn it into an in-place store)
            written = _updated_inputs(before_lowering)
            entry.written_inputs = tuple(i for i, a in enumerate(traces[-1].args) if getattr(a, "name", None) in written)
        self.stats.last_compile_seconds = seconds
        self.stats.last_interpretation_seconds = interpreted - start
        inputs = prologue_fn(*args, **kwargs)
        if inputs is None:
            raise AssertionError(
                "internal error: the prologue rejected the arguments it was built from; please file an issue with "
                f"this prologue:\n{prologue}"
            )
        if hooks.value_reader.reads:
            program.attach(entry)
        return entry, inputs, raised

    def _epilogue(self, computation, hooks, raised):
        """(the epilogue traces, empty when the program needs none; the copy of what it raised or None)."""
        template = exception_template(raised) if raised is not None else None
        if raised is not None:
            _specialize_numbers(computation)
        epilogue_traces = []
        outside = {id(r.value): (r.value, r.provenance) for r in hooks.records}
        outside.update(hooks.outside_containers)
        outside.update(hooks.restrided)
        raises = None if raised is None else (template if template is not None else raised)
        if needs_epilogue(hooks.side_effects.writes, computation.output, outside, raises):
            epilogue, handed_over = build_epilogue(hooks.side_effects.writes, computation.output, self.fn, outside,
                                                   computation.names, raises)
            computation.output = tuple(handed_over)
            epilogue_traces = [epilogue, dispatch_to_executors(epilogue, [get_executor("python")])]
        return epilogue_traces, template

    def _compile_prepared(self, prepared, *, inputs=None, restrided_inputs=frozenset(), fails_in_backward=None,
                          returns_view_bases=False, constrain=None):
        """(the traces after ``prepared``, the backward traces, the forward/backward split or None, the callable,
        what its autograd node runs or None) of a functional computation trace: autograd split when needed,
        rematerialization, executor dispatch.
        ``inputs``: the values its arguments were traced from, for the Transforms' backward hook (None for a
        segment: see :func:`_refuse_whole_program_hooks_on_segments`); ``restrided_inputs``: the inputs the epilogue
        changes in place (``x.t_()``), which the call must not save; ``fails_in_backward``: output name -> eager's
        error on reaching the op making it (transforms/saved_versions.py); ``returns_view_bases``: its autograd node
        also returns the temporaries several outputs are views of (``bases_of_returned_views``: the whole program's
        node, whose outputs the caller gets); ``constrain``: the trace whose constraints the prologue checks, where
        lowering asks what depends on symbolic sizes."""
        traces, backward_traces, split = self._lower(prepared, inputs, restrided_inputs, fails_in_backward,
                                                     returns_view_bases, constrain)
        final = traces[-1]
        node = None
        if split is None:
            computation_fn = final.python_callable()
            if self.disable_torch_autograd:
                computation_fn = _without_grad(computation_fn)
        else:
            computation_fn, node = differentiable_computation(final.python_callable(), backward_traces[-1], split,
                                                              len(final.args), dirty=_written_owned_inputs(final),
                                                              constrain=constrain)
        return traces, backward_traces, split, computation_fn, node

    def _lower(self, computation, inputs=None, restrided_inputs=frozenset(), fails_in_backward=None,
               returns_view_bases=False, constrain=None) -> tuple[list, list, ForwardBackward | None]:
        """Autograd split (when the computation needs grads) and executor dispatch: (the forward traces after
        ``computation``, the last being what runs; the backward traces; the split or None)."""
        check = not self.disable_inplace_copy_check
        post = self.trace_transforms + self._post_optimization()
        if self.disable_torch_autograd or not requires_grad(computation):
            return lower(computation, self.executors, post, check_inplace=check), [], None
        hidden = bases_of_returned_views(computation, constrain) if returns_view_bases else ()
        split = rematerialize(split_forward_backward(computation, self.executors, fails_in_backward, hidden),
                              self.executors)
        traces = [split.forward]
        # saved values a later update of an input overwrites, or inputs whose shape the epilogue changes in place
        forward = snapshot_saved_values(split.forward, restrided_inputs)
        if forward is not split.forward:
            split = ForwardBackward(forward, split.backward, split.saved, split.output_spec,
                                    split.differentiable_outputs, split.differentiable_inputs)
            traces.append(forward)
        traces += lower(split.forward, self.executors, post, check_inplace=check)
        backward_traces = [split.backward]
        merged = cse(split.backward)  # rules repeat work across ops (x * x's two products of the cotangent and x)
        if merged is not split.backward:
            backward_traces.append(merged)
        folded = fold_reshape_chains(backward_traces[-1])  # rules reshape back along each chain of views
        if folded is not backward_traces[-1]:
            backward_traces.append(folded)
        if inputs is not None:
            for t in self.transform_objects:
                transformed = t.transform_backward_pre_lowering(
                    backward_traces[-1], inputs=inputs, differentiable_inputs=split.differentiable_inputs,
                    executors_list=self.executors)
                if transformed is not backward_traces[-1]:
                    backward_traces.append(transformed)
        backward_traces += lower(backward_traces[-1], self.executors, self._post_optimization(), check_inplace=False)
        return traces, backward_traces, split

    def _post_optimization(self) -> tuple:
        return tuple(functools.partial(t.transform_trace_post_optimization, executors_list=self.executors)
                     for t in self.transform_objects)

    def _pre_prologue_transforms(self, prologue, computation, epilogue_traces):
        """Runs each Transform's ``transform_traces_pre_prologue`` on (prologue, computation before autograd,
        epilogue): (the prologue, the computation to differentiate and dispatch, the epilogue traces)."""
        epilogue = epilogue_traces[0] if epilogue_traces else None
        pro, comp, epi = prologue, computation, epilogue
        for t in self.transform_objects:
            pro, comp, epi = t.transform_traces_pre_prologue(pro, comp, epi, executors_list=self.executors)
        if epi is not epilogue:
            epilogue_traces = [] if epi is None else [epi, dispatch_to_executors(epi, [get_executor("python")])]
        return pro, comp, epilogue_traces

    def _prologue_trace(self, hooks, computation, nargs, kwnames, checks, distinct_storage):
        """The prologue as built from the records, before it is lowered to Python."""
        prologue = build_prologue(hooks.records, list(computation.args), self.fn, nargs, kwnames, checks=checks,
                                  computation=computation, distinct_storage=distinct_storage,
                                  aliases=hooks.aliases, strides=hooks.layouts.assumed,
                                  tensor_facts=hooks.layouts.assumed_facts)
        prologue.provenance = TraceProvenance("Prologue (input unpacking and checks)" if checks else
                                              "Prologue (input unpacking; cache='same input' skips checks)")
        return prologue

    def _build_prologue(self, hooks, computation, nargs, kwnames, checks, distinct_storage, prologue=None) -> list:
        """The prologue traces, the last being what runs; ``prologue``: the one to lower instead of building it (what
        the Transforms' hooks returned)."""
        if prologue is None:
            prologue = self._prologue_trace(hooks, computation, nargs, kwnames, checks, distinct_storage)
        prologue_traces = [prologue]
        grouped = group_tensor_checks(prologue, state_tensors(hooks.records))
        if grouped is not prologue:
            prologue_traces.append(grouped)
        if computation.constraints:
            prologue_traces.append(cse(prologue_traces[-1], numbers_only=True))  # sizes recomputed by several checks
        prologue_traces.append(dispatch_to_executors(prologue_traces[-1], [get_executor("python")]))
        return prologue_traces

    def _trace(self, args, kwargs, known=(), env=None):
        trace = TraceCtx("computation")
        trace.location_fn = source_location
        trace.user_location_fn = user_source_location
        trace.provenance = TraceProvenance("Interpretation of the user's program (torch language)")
        hooks = JitHooks(self.fn, self.sharp_edges, symbolic=self.cache_option is CACHE_OPTIONS.SYMBOLIC_VALUES,
                         checkpoint=self.checkpoint)
        trace.tensor_resolver = hooks.resolve_tensors
        hooks.user_lookasides = self.lookasides
        hooks.executors = self.executors  # higher-order operators compile their sub-traces with them
        hooks.value_reader = trace.value_reader = ValueReader(trace, hooks, self.executors, known, env)

        trace.layouts = hooks.layouts
        trace.constant_indices = hooks.constant_indices

        view_versions = trace.view_versions = ViewVersions()

        def on_record(bsym):
            made_while_grad_disabled(bsym)
            view_versions.on_record(bsym)
            hooks.layouts.on_record(bsym)
            hooks.constant_indices.on_record(bsym)

        trace.on_record = on_record
        trace.on_rebind = hooks.on_rebind

        grad_enabled = trace.grad_enabled = torch.is_grad_enabled()  # the grad mode of what is recorded first
        raised = None
        try:
            with tracectx(trace):
                try:
                    result = interpret(self.fn, args, kwargs, hooks=hooks)
                except Exception as e:
                    if not is_program_exception(e):
                        raise
                    # eager would have done everything recorded so far, then raised: so will the compiled entry
                    result, raised = None, with_plain_numbers(e)
        finally:
            # Writes were done for real so the program read them back as CPython would; the epilogue
            # does them on each call, including this one.
            hooks.side_effects.undo()
            torch._C._set_grad_enabled(grad_enabled)  # a failed trace must not leave grad mode changed
            trace.value_reader.finish()
        trace.grad_enabled = grad_enabled
        if grad_enabled:
            # the program may run as an autograd node, which PyTorch runs only outside functorch transforms (the
            # node is then created in C++ without Function.apply's test): the prologue asks again
            functorch_active = torch._C._are_functorch_transforms_active
            trace.state_reads[functorch_active] = functorch_active()
        hooks.check_containers_unchanged()
        # trace.layouts stays: transforms ask it
        trace.location_fn = trace.user_location_fn = trace.tensor_resolver = None
        trace.on_record = trace.value_reader = trace.on_rebind = None
        trace.view_versions = None
        trace.args = list(hooks.inputs)
        trace.input_aliases = {name: first.name for name, first in hooks.aliases.items()}
        trace.output = _check_output(result)
        hooks.value_reader.keep_what_is_used_after(trace.output)
        return trace, hooks, raised


def _refuse_whole_program_hooks_on_segments(transforms, reads) -> None:
    """A program that reads values from tensor data runs as segments, each with its own computation and backward:
    there is no single (prologue, computation, epilogue) to hand to ``transform_traces_pre_prologue``, and no single
    backward to hand to ``transform_backward_pre_lowering``."""
    from thunder.transforms.transform import Transform

    for hook in ("transform_traces_pre_prologue", "transform_backward_pre_lowering"):
        hooked = [t for t in transforms if getattr(type(t), hook) is not getattr(Transform, hook)]
        if reads and hooked:
            remedy = getattr(hooked[0], "remedy_on_segments", "use the transform on a program without such reads, "
                             "or transform_trace_post_optimization (applied to every segment)")
            raise getattr(hooked[0], "segments_error", UnsupportedError)(
                f"{type(hooked[0]).__name__}.{hook} cannot apply to this program: it reads values from tensor data, "
                f"so it runs as segments with no single computation trace; {remedy}")


def _without_grad(computation_fn):
    """``disable_torch_autograd=True``: the program runs as inference, connected to no autograd graph."""

    def computation(*args):
        with torch.no_grad():
            return computation_fn(*args)

    return computation


def _specialize_numbers(computation: TraceCtx) -> None:
    """The program raised while traced: the entry raises a copy of that exception, whose message may hold sizes
    and numbers formatted as text (``stack expects ... [2, 2]``); it applies only to the very same numbers."""
    from thunder.core.proxies import NumberProxy

    for p in computation.args:
        if isinstance(p, NumberProxy) and not p.static:
            computation.add_constraint(p, p.value)


def _checkpoint_predicate(option):
    """``checkpoint=``: module types (a type or a tuple of them) or a predicate ``module -> bool`` choosing the
    submodules whose activations are recomputed in backward instead of saved."""
    if option is None:
        return None
    if isinstance(option, type) or (isinstance(option, tuple) and all(isinstance(t, type) for t in option)):
        return lambda module: isinstance(module, option)
    if callable(option):
        return option
    raise TypeError(f"checkpoint= expects module types or a predicate, got {type(option).__name__}")


def _updated_inputs(trace) -> set[str]:
    """Names of the computation's inputs it writes into (copy_to_out_, or an op with out=)."""
    inputs = {p.name for p in trace.args}
    return {b.kwargs["out"].name for b in trace.bound_symbols
            if isinstance(b.kwargs.get("out"), Proxy) and b.kwargs["out"].name in inputs}


def _written_owned_inputs(trace) -> tuple[int, ...]:
    """Positions of the owned inputs (``trace.owned_inputs``) that the forward ``trace`` updated in place and returns:
    its autograd node marks them dirty, so they take its history as eager's in-place ops do (not a view of the
    input, which an in-place op of the caller's could not update)."""
    if not trace.owned_inputs:
        return ()
    returned = {p.name for p in tree_flatten(trace.output[0])[0] if isinstance(p, Proxy)}
    return tuple(i for i, p in enumerate(trace.args) if p.name in trace.owned_inputs and p.name in returned)


def _traced_values(hooks, computation) -> list:
    """The values the computation's arguments were traced from (None for an argument not read from a tensor)."""
    by_name = {r.proxy.name: r.value for r in hooks.records if r.check == "tensor"}
    return [by_name.get(getattr(a, "name", None)) for a in computation.args]


def _refuse_aliased_updates(hooks, updated: set[str]) -> None:
    """Inputs that share storage, one of them updated in place: each would be a separate value in the
    trace, so reads of the other would miss the update. Refused until aliases are tracked across inputs."""

    real = {r.proxy.name: r.value for r in hooks.records if r.check == "tensor" and r.proxy.name not in hooks.aliases}
    by_storage: dict = {}
    for name, t in real.items():
        pointer = t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) and t.numel() else 0
        if pointer:  # tensors without memory (meta, fake) alias nothing
            by_storage.setdefault(pointer, []).append(name)
    for names in by_storage.values():
        if len(names) > 1 and updated.intersection(names):
            raise UnsupportedError(
                f"the inputs {', '.join(names)} share storage and {sorted(updated.intersection(names))[0]} is updated in "
                "place: thunder.jit does not track aliasing between inputs yet; pass distinct tensors (e.g. a clone)"
            )


def _check_output(result):
    leaves, _ = tree_flatten(result)

    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            raise UnsupportedError(
                "the jitted function returned a tensor that is not an input and was not computed from inputs "
                "(created outside thunder's view, e.g. by an unsupported call); please file an issue"
            )
    return result


def jit(fn, /, *, executors=None, cache=None, sharp_edges=None, disable_inplace_copy_check=False, transforms=None,
        debug_options=None, disable_torch_autograd=False, **compile_options):
    """Compiles ``fn`` (a function or an ``nn.Module``) with thunder.

    executors: executor names or objects, in priority order (default: ``thunder.get_default_executors()``).
    cache: one of ``thunder.CACHE_OPTIONS`` or its string value: "constant values" (default; numbers and
        shapes are baked in and checked on every call), "symbolic values", "no caching" (trace every call),
        "same input" (trust that every call matches the first). ``cache_mode=`` is an alias.
    sharp_edges: "allow" (default), "warn" or "error": what to do when native code reads outside state the
        prologue does not check (the contents of a dict, set or arbitrary object from outside); see
        docs/architecture.md for exactly what is checked.
    transforms: :class:`thunder.Transform` instances (hooks before autograd and after executor dispatch) or
        callables ``trace -> trace`` applied to the computation trace after executor dispatch.
    debug_options: a :class:`thunder.DebugOptions` (e.g. ``check_traces=True``).
    disable_torch_autograd: run as inference even when inputs require grad: no backward is built and the
        results are connected to no autograd graph.
    checkpoint: module types or a predicate ``module -> bool``: calls of the chosen submodules run as
        activation checkpoints (recomputed in backward instead of saved).
    recompile_warning_limit: after this many recompilations (misses while the cache has entries) a
        ``RecompilationWarning`` says why the last call missed (default 8; None: never);
        ``thunder.examine.cache_report(jfn)`` tells why every miss happened.
    Accepted for lightning-thunder code: ``langctx`` (None or "torch"), ``disable_preprocessing`` and
    ``skip_inplace_alias_updates`` (no effect; see docs/coming-from-lightning-thunder.md). Any other keyword
    is an error naming it.
    """

    options = dict(executors=executors, cache=cache, sharp_edges=sharp_edges,
                   disable_inplace_copy_check=disable_inplace_copy_check, transforms=transforms,
                   debug_options=debug_options, disable_torch_autograd=disable_torch_autograd, **compile_options)
    if isinstance(fn, torch.nn.Module):
        from thunder.frontend.module import ThunderModule

        return ThunderModule(fn, **options)
    if not callable(fn):
        raise TypeError(f"thunder.jit expects a function or an nn.Module, got {type(fn).__name__}")
    return ThunderFunction(fn, **options)
