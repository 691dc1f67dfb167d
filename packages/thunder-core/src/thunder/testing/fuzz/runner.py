"""Runs one program under ``thunder.jit`` and in eager, call by call, and classifies the outcome.

Each call gets fresh arguments (the same for both), the outside state of that call (globals ``G``, ``FLAG``; the
list ``LOG`` is emptied), and then compares: the exception raised (type and message) or the outputs, the inputs
after the call (in-place updates), ``LOG`` (side effects), and, where an output requires grad, the gradients.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import warnings

import torch

import thunder
from thunder.core.errors import UnsupportedError
from thunder.frontend.jit import CompiledProgramFailedWarning
from thunder.interpreter.errors import InterpreterError
from thunder.testing.fuzz.compare import TOLERANCES, first_difference
from thunder.testing.fuzz.program import GLOBAL_STATES, Program, default_calls, make_args

__all__ = ["AGREEMENT", "CLASSES", "FAILURES", "Outcome", "calls_for", "run_program"]

MATCH = "match"
EAGER_RAISES = "eager raises, thunder matches"
MISMATCH = "mismatch"
CRASH = "crash"
REFUSAL = "refusal"
DATA_REFUSAL = "refusal (value from tensor data)"
CLASSES = (MATCH, EAGER_RAISES, MISMATCH, CRASH, REFUSAL, DATA_REFUSAL)
FAILURES = (MISMATCH, CRASH)
# a float64 input's gradient may be accumulated from float32 terms (mixed-dtype programs): float32 tolerances
GRAD_DTYPE = torch.float32
AGREEMENT = (MATCH, EAGER_RAISES)  # thunder behaved like eager

# refusals of values read from tensor data (boolean masks, .item(), nonzero): another issue covers them
_DATA_DEPENDENT = re.compile(r"data-dependent|boolean mask|\.item\(\)|nonzero|tolist|unique|values of its inputs|"
                             r"depends on (the )?(tensor )?(data|values)|bool\(\) of a tensor|tensor data", re.I)


# an UnsupportedError that reports thunder's own bug is a crash, not a refusal of the user's construct
_INTERNAL = re.compile(r"this is a bug|please file an issue")


@dataclasses.dataclass
class Outcome:
    cls: str
    detail: str = ""
    call: int | None = None  # index of the call that decided the outcome

    @property
    def kind(self) -> str:
        """The class and a normalized detail: equal for failures of one kind (shrinking keeps it; reports group)."""
        return f"{self.cls}: {normalize(self.detail)}" if self.detail and self.cls != MATCH else self.cls


def normalize(text: str) -> str:
    text = re.sub(r"\(at [^\n]*?\)", "", text)  # the user's location
    text = re.sub(r"\b[vtnf]\d+\b", "x", text)  # program variable names
    text = re.sub(r"(?<=[\w\]])\[\d+\]", "[i]", text)  # output[0], LOG[2]
    text = re.sub(r"<\w*Proxy [^>]*>", "N", text)
    text = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", text)
    text = re.sub(r"\bN(, N)*,?", "N", text)  # (3, 4) and (5,) alike
    text = re.sub(r"(values differ).*", r"\1", text)
    return " ".join(text.split())[:160]


def calls_for(program: Program, cache) -> list:
    return default_calls(len(program.variants), checks_inputs=str(getattr(cache, "value", cache)) != "same input")


def _load(program: Program) -> dict:
    namespace = {}
    exec(compile(program.source(), f"<fuzz program {program.seed}>", "exec"), namespace)
    return namespace


def _attempt(fn, args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args), None
        except Exception as error:  # the program's own exception is part of what is compared
            result = None, error
    # a compiled program that failed where eager does not ran eagerly: thunder's bug, however right the result
    failed = next((w.message for w in caught if issubclass(w.category, CompiledProgramFailedWarning)), None)
    return (None, RuntimeError(f"internal error: {failed}")) if failed is not None else result


def _classify_thunder_error(error: BaseException, during: str) -> Outcome:
    detail = f"{during}{type(error).__name__}: {error}"
    if isinstance(error, (UnsupportedError, InterpreterError)) and not _INTERNAL.search(str(error)):
        return Outcome(DATA_REFUSAL if _DATA_DEPENDENT.search(str(error)) else REFUSAL, detail)
    return Outcome(CRASH, detail)


def _compare_exceptions(eager: Exception, thunder_error: Exception, normalized=None) -> Outcome | None:
    """``normalized``: the messages compared as that function of them returns them."""
    if isinstance(thunder_error, (UnsupportedError, InterpreterError)) and not isinstance(eager, type(thunder_error)):
        return _classify_thunder_error(thunder_error, "")  # refused before reaching eager's error
    if type(eager) is not type(thunder_error):
        return Outcome(MISMATCH, f"exception type {type(thunder_error).__name__}: {thunder_error}, "
                                 f"eager {type(eager).__name__}: {eager}")
    same = (normalized or str)
    if same(str(eager)) != same(str(thunder_error)):
        return Outcome(MISMATCH, f"exception message of {type(eager).__name__}: {thunder_error!s:.200}, "
                                 f"eager: {eager!s:.200}")
    return None


def _loss(outputs, generator_seed: int, dtype=torch.float32):
    generator = torch.Generator().manual_seed(generator_seed)
    leaves = [o for o in _tensor_leaves(outputs) if o.requires_grad and o.dtype.is_floating_point]
    if not leaves:
        return None
    return sum((o.to(dtype) * torch.randn(o.shape, generator=generator).to(dtype)).sum() for o in leaves)


def _reference_grads(program: Program, call, seed: int) -> list | None:
    """The inputs' gradients with the program run in float64 (its float inputs converted, the same loss weights):
    the exact values eager's and thunder's gradients both approximate. None where it cannot be had."""
    namespace = _load(program)
    namespace.update(GLOBAL_STATES[call.state])
    args = [a.detach().double().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) and a.is_floating_point()
            else a for a in make_args(program, call)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outputs = namespace["fn"](*args)
            if call.updates_output and _update_output(outputs) is not None:
                return None
            loss = _loss(outputs, seed, torch.float64)
            if loss is None:
                return None
            loss.backward()
    except Exception:  # noqa: BLE001 - a program float64 does not run: no reference, the difference stands
        return None
    return [a.grad if isinstance(a, torch.Tensor) else None for a in args]


def _lowest_precision(*values, at_least=GRAD_DTYPE) -> torch.dtype | None:
    """The float dtype with the widest tolerance among the tensors in ``values`` and ``at_least`` (None: no float)."""
    dtypes = {t.dtype for t in _tensor_leaves(list(values)) if t.dtype in TOLERANCES} | ({at_least} - {None})
    return max(dtypes, key=lambda d: TOLERANCES[d][0], default=None)


def _as_accurate(eager: torch.Tensor, thunder: torch.Tensor, reference, dtype: torch.dtype) -> bool:
    """Whether thunder's gradient is as accurate as eager's against the float64 ``reference``: its error is within
    four times eager's own (rounding may favour either: where terms much larger than the result cancel, the two
    errors are a few ulps of those terms each, fuzz seed 339432) or within ``dtype``'s tolerance of the reference's
    magnitude."""
    if reference is None or reference.shape != eager.shape:
        return False
    e, t, r = (x.detach().double() for x in (eager, thunder, reference))
    if not torch.equal(t.isnan(), r.isnan()):
        return False

    def error(x):
        return torch.where((x == r) | r.isnan(), 0.0, (x - r).abs()).nan_to_num(math.inf).max().item()

    scale = r.abs().nan_to_num(0.0, 0.0, 0.0).max().item()
    rtol, atol = TOLERANCES[dtype]
    return error(t) <= max(4 * error(e), rtol * scale, atol)


def _tensor_leaves(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensor_leaves(v)


def _compare_output_updates(eager_out, thunder_out) -> Outcome | None:
    """The caller's in-place update of the first output that requires grad (``out.mul_(2)``), in eager and thunder:
    whether it raises (eager refuses to update some views), with which type and message."""
    eager_error, thunder_error = _update_output(eager_out), _update_output(thunder_out)
    if eager_error is None and thunder_error is None:
        return None
    if eager_error is None or thunder_error is None:
        return Outcome(MISMATCH, f"the caller's update of an output: {type(thunder_error).__name__}: {thunder_error}"
                                 f", eager {type(eager_error).__name__}: {eager_error}")
    return _compare_exceptions(eager_error, thunder_error, _normalize_node_names)


def _update_output(outputs) -> Exception | None:
    """Multiplies the first output of ``outputs`` that requires grad by 2 in place; the exception it raises."""
    target = next((o for o in _tensor_leaves(outputs) if o.requires_grad and o.dtype.is_floating_point), None)
    return None if target is None else _attempt(target.mul_, (2,))[1]


def _normalize_node_names(message: str) -> str:
    """``message`` without the autograd node it names: after the caller's update of an output, eager names the op
    that made a tensor its backward saved (``which is output 0 of ExpBackward0``, or ``CopySlices`` where the
    update went through a view of it) or the view (``Output 0 of SplitBackward0``), where thunder's node is one
    for the whole program and keeps the tensors it saved detached (docs/fuzzing.md)."""
    message = re.sub(r", which is output \d+ of [\w:]+,", "", message)  # torch::autograd::CopySlices too
    return re.sub(r"Output \d+ of \w+ is a view", "Output N of a node is a view", message)


def _compare_grads(eager_out, thunder_out, eager_args, thunder_args, seed, reference=None,
                   names_nodes=True) -> Outcome | None:
    """``reference``: makes the float64 gradients (``_reference_grads``), asked only where a gradient differs.
    ``names_nodes``: False where the messages of eager's errors are compared without the nodes they name."""
    # the loss reads every output: after the caller's update of one of several views (split's), eager raises there
    eager_loss, eager_error = _attempt(_loss, (eager_out, seed))
    thunder_loss, thunder_error = _attempt(_loss, (thunder_out, seed))
    if eager_error is None and thunder_error is None:
        if eager_loss is None:
            return None
        _, eager_error = _attempt(lambda: eager_loss.backward(), ())
        _, thunder_error = _attempt(lambda: thunder_loss.backward(), ())
    if thunder_error is not None and eager_error is None:
        return _classify_thunder_error(thunder_error, "backward: ")
    if eager_error is not None:
        return _compare_exceptions(eager_error, thunder_error, None if names_nodes else _normalize_node_names) \
            if thunder_error else Outcome(
                MISMATCH, f"backward: no exception, eager {type(eager_error).__name__}: {eager_error}")
    for i, (e, t) in enumerate(zip(eager_args, thunder_args)):
        if isinstance(e, torch.Tensor) and e.requires_grad and e.is_leaf and t.is_leaf:
            if (e.grad is None) != (t.grad is None):
                return Outcome(MISMATCH, f"grad of input {i}: {t.grad is not None}, eager {e.grad is not None}")
            if e.grad is not None and (found := first_difference(e.grad, t.grad, f"grad of input {i}", GRAD_DTYPE,
                                                                 normwise=True)):
                # float noise (a sum in another order, a rounding to bfloat16 elsewhere), unless thunder's gradient
                # is less accurate than eager's against the float64 reference
                references = reference() if reference is not None else None  # cached: asked once per call
                dtype = _lowest_precision(eager_out, eager_args)
                if not (references and _as_accurate(e.grad, t.grad, references[i], dtype)):
                    return Outcome(MISMATCH, found)
    return None


def run_program(program: Program, cache=None, executors=None, calls=None) -> Outcome:
    """The outcome of ``program`` under ``thunder.jit(fn, cache=cache, executors=executors)`` vs eager."""
    eager_ns, thunder_ns = _load(program), _load(program)
    try:
        jitted = thunder.jit(thunder_ns["fn"], cache=cache, executors=executors)
    except Exception as error:
        return _classify_thunder_error(error, "thunder.jit: ")
    eager_raised = False
    for index, call in enumerate(calls if calls is not None else calls_for(program, cache)):
        for namespace in (eager_ns, thunder_ns):
            namespace.update(GLOBAL_STATES[call.state])
            namespace["LOG"].clear()
        eager_args, thunder_args = make_args(program, call), make_args(program, call)
        eager_out, eager_error = _attempt(eager_ns["fn"], eager_args)
        thunder_out, thunder_error = _attempt(jitted, thunder_args)
        seed = program.seed * 1000 + index
        outcome = _compare_call(eager_out, eager_error, thunder_out, thunder_error, eager_args, thunder_args,
                                eager_ns, thunder_ns, seed,
                                functools.cache(functools.partial(_reference_grads, program, call, seed)),
                                call.updates_output)
        if outcome is not None:
            outcome.call = index
            return outcome
        eager_raised |= eager_error is not None
    return Outcome(EAGER_RAISES if eager_raised else MATCH)


def _compare_call(eager_out, eager_error, thunder_out, thunder_error, eager_args, thunder_args, eager_ns,
                  thunder_ns, seed, reference=None, updates_output=False) -> Outcome | None:
    if thunder_error is not None and eager_error is None:
        return _classify_thunder_error(thunder_error, "")
    if eager_error is not None:
        if thunder_error is None:
            return Outcome(MISMATCH, f"no exception, eager {type(eager_error).__name__}: {eager_error!s:.200}")
        found = _compare_exceptions(eager_error, thunder_error)
    else:
        # a float64 output may be computed in float32 or bfloat16 and converted last (``v.to(torch.float64)``):
        # compared with the tolerance of the lowest precision among the program's tensors
        found = first_difference(eager_out, thunder_out, tolerance_dtype=_lowest_precision(eager_out, eager_args,
                                                                                           at_least=None))
        found = Outcome(MISMATCH, found) if found else None
    for i, (e, t) in enumerate(zip(eager_args, thunder_args)):
        found = found or _as_mismatch(first_difference(e, t, f"input {i} after the call"))
        if isinstance(e, torch.Tensor) and isinstance(t, torch.Tensor) and e.stride() != t.stride():
            found = found or Outcome(MISMATCH, f"input {i} after the call: strides {t.stride()}, eager {e.stride()}")
    found = found or _as_mismatch(first_difference(eager_ns["LOG"], thunder_ns["LOG"], "LOG (side effects)"))
    if found is None and eager_error is None:
        if updates_output:
            found = _compare_output_updates(eager_out, thunder_out)
        found = found or _compare_grads(eager_out, thunder_out, eager_args, thunder_args, seed, reference,
                                        names_nodes=not updates_output)
    return found


def _as_mismatch(difference: str | None) -> Outcome | None:
    return Outcome(MISMATCH, difference) if difference else None
