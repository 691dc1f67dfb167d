"""Every OpInfo of PyTorch's op_db, jitted and compared with eager (forward values, dtypes, shapes).

For each OpInfo, up to 3 samples of ``op.sample_inputs("cpu", dtype)`` run through
``thunder.jit(lambda *a, **k: op.op(*a, **k))`` and eager; the "float32" run uses float32, or the
op's first supported dtype for ops without float32 (bitwise ops...). Heavier runs in float64,
bfloat16, int64 and bool (1 sample each) are marked ``slow``: ``nox -s opinfo`` runs them.

Random ops are tested apart: with the same seed they must draw exactly eager's numbers. Ops whose
output is uninitialized memory (``empty``...) are compared by shape and dtype only.

What does not pass sits in ``opinfo_expected_failures.EXPECTED_FAILURES`` with its reason. The test
is strict: a listed op that passes fails the test, so the list only shrinks.
"""

from __future__ import annotations

import itertools
import warnings

import pytest
import torch
from opinfo_db import OPS, RANDOM, UNINITIALIZED, declared_tolerance
from opinfo_expected_failures import EXPECTED_FAILURES

import thunder
from thunder.core.errors import UnsupportedError
from thunder.torch.inplace import CHANGES_METADATA
from thunder.torch.opaque import OpaqueFallbackWarning

OTHER_DTYPES = (torch.float64, torch.bfloat16, torch.int64, torch.bool)


DETERMINISTIC = [k for k in OPS if k not in RANDOM and k not in UNINITIALIZED]
NONDETERMINISTIC = [k for k in OPS if k in RANDOM or k in UNINITIALIZED]

# key -> (passed, "symbols" | "fallback"); read by conftest.py's terminal summary
RESULTS: dict[str, tuple[bool, str]] = {}


def first_dtype(op):
    supported = op.supported_dtypes("cpu")
    if torch.float32 in supported:
        return torch.float32
    for dt in (torch.int64, torch.int32, torch.bool, torch.float64, torch.complex64, torch.uint8):
        if dt in supported:
            return dt
    return None


def tolerance(op, dtype) -> dict:
    declared = declared_tolerance(op, dtype)
    atol, rtol = declared if declared is not None else (None, None)
    if dtype is torch.bfloat16:
        atol, rtol = max(atol or 0, 1e-2), max(rtol or 0, 1.6e-2)
    return {} if atol is None else {"atol": atol, "rtol": rtol}


def assert_same(actual, expected, *, values=True, **tol):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"expected a tensor, got {type(actual).__name__}"
        assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != eager's {expected.dtype}"
        assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != eager's {tuple(expected.shape)}"
        if values:
            torch.testing.assert_close(actual, expected, equal_nan=True, check_device=True, **tol)
    elif isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (type(actual), type(expected))
        for a, e in zip(actual, expected):
            assert_same(a, e, values=values, **tol)
    else:
        assert type(actual) is type(expected) and (actual == expected or actual != actual), (actual, expected)


def _fallback_used(jfn) -> bool:
    traces = thunder.last_traces(jfn)
    return any(".opaque." in bsym.sym.id for bsym in traces[-1].bound_symbols) if traces else False


def run_op(op, dtype, nsamples: int, *, seeded=False, values=True, fn=None) -> str:
    """Runs ``op``'s samples (through ``fn``, by default the op itself) jitted and eager; returns "symbols" or
    "fallback"; raises on a mismatch. Samples eager itself rejects are skipped (the OpInfo's error inputs are not
    what this tests)."""
    fn = fn or op.op
    jfn = thunder.jit(lambda *a, **k: fn(*a, **k))
    tol = tolerance(op, dtype)
    ran, fallback = 0, False
    torch.manual_seed(0)
    samples = list(itertools.islice(op.sample_inputs("cpu", dtype, requires_grad=False), nsamples))
    for sample in samples:
        args, kwargs = (sample.input, *sample.args), dict(sample.kwargs)
        try:
            if seeded:
                torch.manual_seed(42)
            expected = fn(*args, **kwargs)
            state = torch.get_rng_state()
        except Exception:
            continue
        if seeded:
            torch.manual_seed(42)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            actual = jfn(*args, **kwargs)
        if sample.output_process_fn_grad is not None:
            actual, expected = sample.output_process_fn_grad(actual), sample.output_process_fn_grad(expected)
        assert_same(actual, expected, values=values, **tol)
        if seeded:
            assert torch.equal(torch.get_rng_state(), state), "the generator advanced differently from eager"
        fallback = fallback or _fallback_used(jfn)
        ran += 1
    if samples and not ran:
        pytest.skip("eager rejects every sample")
    return "fallback" if fallback else "symbols"


def _check(key, dtype, nsamples, **kw):
    op = OPS[key]
    listed = EXPECTED_FAILURES.get(key if dtype is None else f"{key}@{str(dtype).removeprefix('torch.')}")
    # Another dtype of an op listed for float32 fails for the same reason, or passes (the reason may be
    # dtype-specific): tolerated both ways. Entries "name@dtype" are strict like the float32 ones.
    inherited = EXPECTED_FAILURES.get(key) if dtype is not None and listed is None else None
    dt = first_dtype(op) if dtype is None else dtype
    if dt is None or dt not in op.supported_dtypes("cpu"):
        pytest.skip(f"{key} does not support {dt}")
    error = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OpaqueFallbackWarning)
            kind = run_op(op, dt, nsamples, **kw)
    except pytest.skip.Exception:
        raise
    except Exception as e:
        # reported without the traceback: the interpreter's frames make pytest's reports very slow
        error = f"{type(e).__name__}: {str(e)[:500]}"
    if error is not None:
        if dtype is None:
            RESULTS[key] = (False, "")
        if listed is not None or inherited is not None:
            pytest.xfail(f"expected failure ({listed or inherited}): {error}")
        pytest.fail(f"{key} in {dt}: {error}", pytrace=False)
    if dtype is None:
        RESULTS[key] = (True, kind)
    if listed is not None:
        pytest.fail(f"{key} in {dt} is listed in opinfo_expected_failures.py ({listed}) but passes now: "
                    "remove it from the list")


@pytest.mark.parametrize("key", DETERMINISTIC)
def test_opinfo_forward(key):
    _check(key, None, 3)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", OTHER_DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("key", DETERMINISTIC)
def test_opinfo_forward_dtypes(key, dtype):
    _check(key, dtype, 1)


@pytest.mark.parametrize("key", NONDETERMINISTIC)
def test_opinfo_random_same_seed(key):
    # random ops: same seed, same numbers, same generator state after; uninitialized outputs: metadata only
    _check(key, None, 3, seeded=key in RANDOM, values=key not in UNINITIALIZED)


def _method_name(op) -> str | None:
    method = op.method_variant
    name = getattr(method, "__name__", None)
    return name if name is not None and getattr(torch.Tensor, name, None) is not None else None


METHODS = [k for k in DETERMINISTIC if _method_name(OPS[k]) is not None and k not in EXPECTED_FAILURES]


@pytest.mark.parametrize("key", METHODS)
def test_opinfo_method_form(key):
    # ``x.name(*args)`` must mean ``torch.name(x, *args)``: a method whose argument order differs from the
    # function's (``x.where(cond, y)`` is ``torch.where(cond, x, y)``) must not be bound to the function as is
    op = OPS[key]
    name = _method_name(op)
    dt = first_dtype(op)
    if dt is None:
        pytest.skip(f"{key} supports no dtype this test uses")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpaqueFallbackWarning)
        run_op(op, dt, 2, fn=lambda x, *a, **k: getattr(x, name)(*a, **k))
        run_op(op, dt, 1, fn=lambda *a, **k: getattr(torch.Tensor, name)(*a, **k))


def _inplace_name(op) -> str | None:
    name = getattr(op.inplace_variant, "__name__", None)
    return name if name is not None and getattr(torch.Tensor, name, None) is op.inplace_variant else None


INPLACE = [k for k in DETERMINISTIC if _inplace_name(OPS[k]) is not None and k not in EXPECTED_FAILURES]


def _outcome(fn, args, kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:
        return None, e


@pytest.mark.parametrize("through_view", [False, True], ids=["input", "view_of_input"])
@pytest.mark.parametrize("key", INPLACE)
def test_opinfo_inplace_method(key, through_view):
    # every in-place Tensor method (x.<op>_(...)) on an input, or on a view of one, updates it as eager does,
    # or raises eager's error (a result dtype that cannot be cast back, a shape that does not broadcast)
    op = OPS[key]
    name = _inplace_name(op)
    dt = first_dtype(op)
    if dt is None:
        pytest.skip(f"{key} supports no dtype this test uses")

    def fn(x, *args, **kwargs):
        target = x[0] if through_view else x
        out = getattr(target, name)(*args, **kwargs)
        return out.clone() if out is not None else None

    jfn = thunder.jit(fn)
    torch.manual_seed(0)
    ran = 0
    for sample in itertools.islice(op.sample_inputs("cpu", dt, requires_grad=False), 2):
        x = sample.input
        if not isinstance(x, torch.Tensor):
            continue
        x = x.unsqueeze(0) if through_view else x
        eager_x, jit_x = x.clone(), x.clone()
        expected, eager_error = _outcome(fn, (eager_x, *sample.args), sample.kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            actual, error = _outcome(jfn, (jit_x, *sample.args), sample.kwargs)
        if name in CHANGES_METADATA:  # refused with the reason: a trace's tensors have fixed shapes
            assert isinstance(error, UnsupportedError) and "changes the shape" in str(error), error
            ran += 1
            continue
        if eager_error is not None:
            assert type(error) is type(eager_error), f"eager raised {eager_error!r}, thunder {error!r}"
            continue
        if expected is not None and expected.shape != sample.input.shape:
            continue  # eager resized the tensor to the result's shape (deprecated: it warns); thunder refuses
        assert error is None, f"thunder raised {error!r}"
        assert_same(actual, expected, **tolerance(op, dt))
        assert_same(jit_x, eager_x, **tolerance(op, dt))
        ran += 1
    if not ran:
        pytest.skip("eager rejects every sample")
