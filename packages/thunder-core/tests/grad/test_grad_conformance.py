"""Gradients of every differentiable OpInfo of PyTorch's op_db, jitted, compared with eager autograd.

For each OpInfo that supports autograd (and whose forward passes tests/torch/test_opinfo_conformance.py),
the first samples of ``op.sample_inputs("cpu", dtype, requires_grad=True)`` run through
``thunder.jit(lambda *a, **k: op.op(*a, **k))`` and eager, in float64 where the op's backward supports it
(float32 otherwise). The outputs are compared, then ``torch.autograd.grad`` of the differentiable outputs
with the same random cotangents with respect to every floating input that requires grad. A sample passes
only if thunder's backward ran (``thunder.last_backward_traces`` is not empty), so a gradient cannot match
by accident (eager autograd recording the jitted program's torch calls). Heavier runs (more samples, and
float32 for ops differentiable in float64) are marked ``slow``: ``nox -s opinfo`` runs them.

Each op is counted as differentiated by thunder (grad rules, decompositions) or through the PyTorch-autograd
fallback (an island: a symbol with neither, run under PyTorch's autograd; ids ``torch_island.*``).

Complex dtypes are not tested: the autograd transform refuses them with a clear error.

What does not pass sits in ``grad_expected_failures.EXPECTED_FAILURES`` with its reason. The test is
strict: a listed op that passes fails the test, so the list only shrinks.
"""

from __future__ import annotations

import itertools
import warnings

import pytest
import torch
from grad_expected_failures import EXPECTED_FAILURES
from opinfo_db import OPS, RANDOM, UNINITIALIZED, declared_tolerance
from opinfo_expected_failures import EXPECTED_FAILURES as FORWARD_FAILURES

import thunder
from thunder.torch.opaque import OpaqueFallbackWarning

# random ops draw numbers (their gradients are tested in the model and random tests); uninitialized
# outputs have no values to differentiate
NOT_COMPARABLE = RANDOM | UNINITIALIZED


def grad_dtype(op):
    supported = op.supported_backward_dtypes("cpu")
    for dt in (torch.float64, torch.float32):
        if dt in supported:
            return dt
    return None


DIFFERENTIABLE = [k for k, op in OPS.items() if op.supports_autograd and k not in NOT_COMPARABLE
                  and k not in FORWARD_FAILURES and grad_dtype(op) is not None]

# key -> (passed, "thunder" | "island"); read by conftest.py's terminal summary
RESULTS: dict[str, tuple[bool, str]] = {}


def tolerance(op, dtype) -> dict:
    """The OpInfo's tolerance overrides, at least a floor per dtype: a backward formula may be written in
    another (equally exact) order than eager's, so gradients are compared a little more loosely than values."""
    atol, rtol = {torch.float64: (1e-7, 1e-7), torch.float32: (1e-5, 1.3e-5)}[dtype]
    declared = declared_tolerance(op, dtype)
    if declared is not None:
        atol, rtol = max(atol, declared[0]), max(rtol, declared[1])
    return {"atol": atol, "rtol": rtol}


def assert_same(actual, expected, what: str, **tol):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"{what}: expected a tensor, got {type(actual).__name__}"
        assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != eager's {expected.dtype}"
        assert actual.shape == expected.shape, f"{what}: shape {tuple(actual.shape)} != eager's {tuple(expected.shape)}"
        torch.testing.assert_close(actual, expected, equal_nan=True, msg=lambda m: f"{what}: {m}", **tol)
    elif isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (what, type(actual), type(expected))
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{what}[{i}]", **tol)
    else:
        assert type(actual) is type(expected) and (actual == expected or actual != actual), (what, actual, expected)


def _walk(bsyms):
    for b in bsyms:
        yield b
        yield from _walk(b.subsymbols)


def islands(jfn) -> set[str]:
    """Ids of the symbols the last call differentiated through PyTorch's autograd (``torch_island.N.<id>``)."""
    return {b.sym.id.split(".", 2)[2] for t in thunder.last_traces(jfn) for b in _walk(t.bound_symbols)
            if b.sym.id.startswith("torch_island.")}


def _tensors(x) -> list:
    """The tensors of an output tree (tuples, lists, dicts, and structseqs such as torch.return_types)."""
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in _tensors(item)]
    if isinstance(x, dict):
        return [t for item in x.values() for t in _tensors(item)]
    return []


def _grads(outputs, leaves, cotangents):
    outs = [o for o, c in zip(outputs, cotangents) if c is not None]
    cots = [c for c in cotangents if c is not None]
    grads = torch.autograd.grad(outs, leaves, cots, allow_unused=True)
    # an input the outputs do not depend on: eager says None, a backward may compute zeros (same thing)
    return [torch.zeros_like(x) if g is None else g for g, x in zip(grads, leaves)]


def run_op(op, dtype, nsamples: int) -> set[str]:
    """Runs ``op``'s first samples jitted and eager, values then gradients; returns the ids of the symbols
    differentiated through PyTorch's autograd (empty: thunder differentiated everything); raises on a mismatch. Samples eager rejects, and samples
    with no differentiable output or no input requiring grad, are skipped."""
    fn = op.op
    jfn = thunder.jit(lambda *a, **k: fn(*a, **k))
    tol = tolerance(op, dtype)
    ran, island = 0, set()
    torch.manual_seed(0)
    samples = list(itertools.islice(op.sample_inputs("cpu", dtype, requires_grad=True), nsamples))
    for i, sample in enumerate(samples):
        args, kwargs = (sample.input, *sample.args), dict(sample.kwargs)
        leaves = [t for t in _tensors((args, kwargs)) if t.requires_grad and t.is_floating_point()]
        if not leaves:
            continue
        try:
            expected = fn(*args, **kwargs)
        except Exception:
            continue
        process = sample.output_process_fn_grad or (lambda x: x)
        expected_flat = _tensors(process(expected))
        if not any(o.requires_grad for o in expected_flat):
            continue
        torch.manual_seed(1234 + i)
        cotangents = [torch.randn_like(o) if o.requires_grad else None for o in expected_flat]
        expected_grads = _grads(expected_flat, leaves, cotangents)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            actual = jfn(*args, **kwargs)
        actual_flat = _tensors(process(actual))
        assert_same(actual_flat, [o.detach() for o in expected_flat], f"sample {i} outputs", **tol)
        for j, (a, e) in enumerate(zip(actual_flat, expected_flat)):
            assert a.requires_grad == e.requires_grad, f"sample {i} output {j}: requires_grad {a.requires_grad}, eager's {e.requires_grad}"
        assert thunder.last_backward_traces(jfn), f"sample {i}: no thunder backward was built"
        actual_grads = _grads(actual_flat, leaves, cotangents)
        assert_same(actual_grads, expected_grads, f"sample {i} gradients", **tol)
        island |= islands(jfn)
        ran += 1
    if not ran:
        pytest.skip("no sample eager accepts has a differentiable output")
    return island


def _check(key, nsamples, dtype=None, variant=None):
    """``variant`` (a slow run: "float32", "samples") has its own entries ``name@variant``, strict like the
    default run's; an op listed for the default run may fail a variant for the same reason, or pass it."""
    op = OPS[key]
    listed = EXPECTED_FAILURES.get(key if variant is None else f"{key}@{variant}")
    inherited = EXPECTED_FAILURES.get(key) if variant is not None and listed is None else None
    dt = grad_dtype(op) if dtype is None else dtype
    if dt not in op.supported_backward_dtypes("cpu"):
        pytest.skip(f"{key} is not differentiable in {dt}")
    error = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OpaqueFallbackWarning)
            kind = "island" if run_op(op, dt, nsamples) else "thunder"
    except pytest.skip.Exception:
        raise
    except Exception as e:
        # reported without the traceback: the interpreter's frames make pytest's reports very slow
        error = f"{type(e).__name__}: {str(e)[:600]}"
    if variant is None:
        RESULTS[key] = (error is None, "" if error is not None else kind)
    if error is not None:
        if listed is not None or inherited is not None:
            pytest.xfail(f"expected failure ({listed or inherited}): {error}")
        pytest.fail(f"{key} in {dt}: {error}", pytrace=False)
    if listed is not None:
        pytest.fail(f"{key} in {dt} is listed in grad_expected_failures.py ({listed}) but passes now: "
                    "remove it from the list")


@pytest.mark.parametrize("key", DIFFERENTIABLE)
def test_opinfo_grad(key):
    _check(key, 2)


@pytest.mark.slow
@pytest.mark.parametrize("key", DIFFERENTIABLE)
def test_opinfo_grad_more_samples(key):
    _check(key, 8, variant="samples")


@pytest.mark.slow
@pytest.mark.parametrize("key", DIFFERENTIABLE)
def test_opinfo_grad_float32(key):
    _check(key, 2, torch.float32, variant="float32")
