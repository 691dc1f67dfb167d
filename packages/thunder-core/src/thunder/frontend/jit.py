"""``thunder.jit``: interpret, trace, transform, compile, cache.

A jitted callable keeps a list of cache entries. A call runs each entry's prologue until one accepts
the arguments (returns the computation's inputs) and runs that entry's computation; if none does,
the function is traced again and a new entry is added.
"""

from __future__ import annotations

import time

from thunder.core.errors import UnsupportedError
from thunder.core.proxies import Proxy
from thunder.core.trace import TraceCtx, TraceProvenance, tracectx
from thunder.extend import get_executor, resolve_executors
from thunder.frontend.autograd_function import differentiable_computation
from thunder.frontend.cache import CACHE_OPTIONS, CacheEntry, resolve_cache_option
from thunder.frontend.epilogue import build_epilogue, needs_epilogue
from thunder.frontend.hooks import JitHooks, made_while_grad_disabled, source_location
from thunder.frontend.prologue import build_prologue
from thunder.frontend.raised import exception_template, is_program_exception, with_plain_numbers
from thunder.interpreter import interpret
from thunder.transforms.autograd import ForwardBackward, requires_grad, split_forward_backward
from thunder.transforms.cse import cse
from thunder.transforms.dispatch import dispatch_to_executors
from thunder.transforms.overwrites import snapshot_saved_values
from thunder.transforms.pipeline import lower, prepare
from thunder.transforms.remat import rematerialize

__all__ = ["jit", "ThunderFunction", "CompileStats"]

_SHARP_EDGES = (None, "allow", "warn", "error")


class CompileStats:
    """Counters and timings of one jitted callable (``thunder.compile_stats(jfn)``)."""

    def __init__(self):
        self.calls = 0
        self.cache_hits = 0
        self.cache_misses = 0
        self.last_compile_seconds: float | None = None
        self.last_interpretation_seconds: float | None = None
        self.last_entry: CacheEntry | None = None

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
                 transforms=None, **compile_options):
        if sharp_edges not in _SHARP_EDGES:
            raise ValueError(f"sharp_edges must be one of 'allow', 'warn', 'error', got {sharp_edges!r}")
        self.checkpoint = _checkpoint_predicate(compile_options.pop("checkpoint", None))
        if compile_options:
            raise TypeError(f"thunder.jit got unknown options: {', '.join(sorted(compile_options))}")
        self.fn = fn
        self.executors = resolve_executors(executors)
        self.cache_option = resolve_cache_option(cache)
        self.sharp_edges = sharp_edges
        self.disable_inplace_copy_check = disable_inplace_copy_check
        self.transforms = tuple(transforms or ())
        self.entries: list[CacheEntry] = []
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
        stats.calls += 1
        for entry in self.entries:
            try:
                inputs = entry.prologue(*args, **kwargs)
            except Exception:  # an unreachable path (missing attribute, short list) is a miss, not an error
                inputs = None
            if inputs is not None:
                stats.cache_hits += 1
                stats.last_entry = entry
                if entry.epilogue is None:
                    return entry.computation(*inputs)
                return entry.epilogue(entry.computation(*inputs), *args, **kwargs)
        stats.cache_misses += 1
        entry, inputs, raised = self._compile(args, kwargs)
        if self.cache_option is not CACHE_OPTIONS.NO_CACHING and (raised is None or entry.reraises):
            self.entries.append(entry)
        stats.last_entry = entry
        if entry.epilogue is None:
            return entry.computation(*inputs)
        if raised is None:
            return entry.epilogue(entry.computation(*inputs), *args, **kwargs)
        # The program raised while traced: the entry does what came before the raise, then raises a copy.
        # This call raises the very exception the program made (its traceback shows the program's frames).
        try:
            entry.epilogue(entry.computation(*inputs), *args, **kwargs)
        except type(raised):
            pass
        raise raised

    def __repr__(self) -> str:
        return f"thunder.jit({self.fn!r})"

    # compilation ---------------------------------------------------------------------------------
    def _compile(self, args, kwargs) -> tuple[CacheEntry, tuple, BaseException | None]:
        """(the entry, the computation's inputs for this call, the exception the program raised or None)."""
        start = time.perf_counter()
        computation, hooks, raised = self._trace(args, kwargs)
        template = exception_template(raised) if raised is not None else None
        epilogue_traces = []
        outside = {id(r.value): (r.value, r.provenance) for r in hooks.records}
        outside.update(hooks.outside_containers)
        raises = None if raised is None else (template if template is not None else raised)
        if needs_epilogue(hooks.side_effects.writes, computation.output, outside, raises):
            epilogue, handed_over = build_epilogue(hooks.side_effects.writes, computation.output, self.fn, outside,
                                                   computation.names, raises)
            computation.output = tuple(handed_over)
            epilogue_traces = [epilogue, dispatch_to_executors(epilogue, [get_executor("python")])]
        interpreted = time.perf_counter()
        traces = [computation]
        traces += prepare(computation)
        backward_traces, split = [], None
        if requires_grad(traces[-1]):
            split = rematerialize(split_forward_backward(traces[-1], self.executors), self.executors)
            traces.append(split.forward)
            forward = snapshot_saved_values(split.forward)  # saved values a later update of an input overwrites
            if forward is not split.forward:
                split = ForwardBackward(forward, split.backward, split.saved, split.output_spec,
                                        split.differentiable_outputs, split.differentiable_inputs)
                traces.append(forward)
            traces += lower(split.forward, self.executors, self.transforms,
                            check_inplace=not self.disable_inplace_copy_check)
            backward_traces = [split.backward, *lower(split.backward, self.executors, check_inplace=False)]
        else:
            traces += lower(traces[-1], self.executors, self.transforms, check_inplace=not self.disable_inplace_copy_check)
        final = traces[-1]
        updated_inputs = _updated_inputs(final)
        if updated_inputs:
            _refuse_aliased_updates(hooks, updated_inputs)
        kwnames = tuple(kwargs)
        checks = self.cache_option is not CACHE_OPTIONS.SAME_INPUT
        prologue = build_prologue(hooks.records, list(computation.args), self.fn, len(args), kwnames, checks=checks,
                                  computation=computation, distinct_storage=bool(updated_inputs),
                                  aliases=hooks.aliases, strides=hooks.layouts.assumed)
        prologue.provenance = TraceProvenance("Prologue (input unpacking and checks)" if checks else
                                              "Prologue (input unpacking; cache='same input' skips checks)")
        prologue_traces = [prologue]
        if computation.constraints:
            prologue_traces.append(cse(prologue, numbers_only=True))  # sizes recomputed by several checks
        prologue_traces.append(dispatch_to_executors(prologue_traces[-1], [get_executor("python")]))
        prologue_fn = prologue_traces[-1].python_callable()
        if split is None:
            computation_fn = final.python_callable()
        else:
            computation_fn = differentiable_computation(final.python_callable(), backward_traces[-1], split,
                                                        len(final.args))
        seconds = time.perf_counter() - start
        epilogue_fn = epilogue_traces[-1].python_callable() if epilogue_traces else None
        entry = CacheEntry(prologue_fn, computation_fn, epilogue_fn, prologue_traces, traces, epilogue_traces, seconds,
                           backward_traces, tuple(split.saved) if split is not None else (),
                           reraises=template is not None)
        self.stats.last_compile_seconds = seconds
        self.stats.last_interpretation_seconds = interpreted - start
        inputs = prologue_fn(*args, **kwargs)
        if inputs is None:
            raise AssertionError(
                "internal error: the prologue rejected the arguments it was built from; please file an issue with "
                f"this prologue:\n{prologue}"
            )
        return entry, inputs, raised

    def _trace(self, args, kwargs):
        trace = TraceCtx("computation")
        trace.location_fn = source_location
        trace.provenance = TraceProvenance("Interpretation of the user's program (torch language)")
        hooks = JitHooks(self.fn, self.sharp_edges, symbolic=self.cache_option is CACHE_OPTIONS.SYMBOLIC_VALUES,
                         checkpoint=self.checkpoint)
        trace.tensor_resolver = hooks.resolve_tensors
        hooks.executors = self.executors  # higher-order operators compile their sub-traces with them
        import torch

        trace.layouts = hooks.layouts

        def on_record(bsym):
            made_while_grad_disabled(bsym)
            hooks.layouts.on_record(bsym)

        trace.on_record = on_record

        grad_enabled = torch.is_grad_enabled()
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
        trace.grad_enabled = grad_enabled
        hooks.check_containers_unchanged()
        trace.location_fn = trace.tensor_resolver = trace.on_record = None  # trace.layouts stays: transforms ask it
        trace.args = list(hooks.inputs)
        trace.input_aliases = {name: first.name for name, first in hooks.aliases.items()}
        trace.output = _check_output(result)
        return trace, hooks, raised


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


def _refuse_aliased_updates(hooks, updated: set[str]) -> None:
    """Inputs that share storage, one of them updated in place: each would be a separate value in the
    trace, so reads of the other would miss the update. Refused until aliases are tracked across inputs."""
    import torch

    real = {r.proxy.name: r.value for r in hooks.records if r.check == "tensor" and r.proxy.name not in hooks.aliases}
    by_storage: dict = {}
    for name, t in real.items():
        if isinstance(t, torch.Tensor) and t.numel():
            by_storage.setdefault(t.untyped_storage().data_ptr(), []).append(name)
    for names in by_storage.values():
        if len(names) > 1 and updated.intersection(names):
            raise UnsupportedError(
                f"the inputs {', '.join(names)} share storage and {sorted(updated.intersection(names))[0]} is updated in "
                "place: thunder.jit does not track aliasing between inputs yet; pass distinct tensors (e.g. a clone)"
            )


def _check_output(result):
    from thunder.core.pytree import tree_flatten

    leaves, _ = tree_flatten(result)
    import torch

    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            raise UnsupportedError(
                "the jitted function returned a tensor that is not an input and was not computed from inputs "
                "(created outside thunder's view, e.g. by an unsupported call); please file an issue"
            )
    return result


def jit(fn, /, *, executors=None, cache=None, sharp_edges=None, disable_inplace_copy_check=False, transforms=None,
        **compile_options):
    """Compiles ``fn`` (a function or an ``nn.Module``) with thunder.

    executors: executor names or objects, in priority order (default: ``thunder.get_default_executors()``).
    cache: one of ``thunder.CACHE_OPTIONS`` or its string value: "constant values" (default; numbers and
        shapes are baked in and checked on every call), "no caching" (trace every call), "same input"
        (trust that every call matches the first).
    sharp_edges: "allow" (default), "warn" or "error": what to do when native code reads outside state the
        prologue does not check (the contents of a dict, set or arbitrary object from outside); see
        docs/architecture.md for exactly what is checked.
    transforms: callables ``trace -> trace`` applied to the computation trace after executor dispatch.
    checkpoint: module types or a predicate ``module -> bool``: calls of the chosen submodules run as
        activation checkpoints (recomputed in backward instead of saved).
    """
    import torch

    if isinstance(fn, torch.nn.Module):
        from thunder.frontend.module import ThunderModule

        return ThunderModule(fn, executors=executors, cache=cache, sharp_edges=sharp_edges,
                             disable_inplace_copy_check=disable_inplace_copy_check, transforms=transforms,
                             **compile_options)
    if not callable(fn):
        raise TypeError(f"thunder.jit expects a function or an nn.Module, got {type(fn).__name__}")
    return ThunderFunction(fn, executors=executors, cache=cache, sharp_edges=sharp_edges,
                           disable_inplace_copy_check=disable_inplace_copy_check, transforms=transforms,
                           **compile_options)
