"""Running a function through the torch language two ways and comparing with eager PyTorch.

``direct``: the default executors (torch language symbols run as single torch calls).
``prims``: an executor that implements only prims, so every symbol runs as its decomposition.
"""

from __future__ import annotations

import pytest
import torch

from thunder.extend import Executor, get_executor
from thunder.frontend.simple_trace import run_traced, trace_program
from thunder.transforms.dce import dce
from thunder.transforms.dispatch import dispatch_to_executors

_prims_only = None


def prims_only_executor() -> Executor:
    global _prims_only
    if _prims_only is None:
        torch_ex = get_executor("torch")
        # the torch executor's class, for its translation of thunder dtypes/devices to torch's
        _prims_only = type(torch_ex)("prims_only")
        for sym_id, impl in torch_ex.implmap.items():
            if sym_id.startswith("prims."):
                _prims_only.implmap[sym_id] = impl
    return _prims_only


def run_prims_only(fn, *args, **kwargs):
    trace, inputs = trace_program(fn, args, kwargs)
    final = dce(dispatch_to_executors(trace, [prims_only_executor(), get_executor("python")]))
    return final.python_callable()(*inputs), final


def run_direct(fn, *args, **kwargs):
    # only the built-in executors: installed plugins may claim some symbols first
    return run_traced(fn, *args, executors=["torch"], **kwargs)


RUNNERS = {"direct": run_direct, "prims": run_prims_only}


def assert_same(actual, expected, **tol):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"expected a tensor, got {type(actual)}"
        torch.testing.assert_close(actual, expected, equal_nan=True, **tol)
    elif isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            assert_same(a, e, **tol)
    else:
        assert actual == expected, (actual, expected)


def check(fn, *args, mode="both", calls=(), tol=None, **kwargs):
    """Compares ``fn`` traced (torch executor, and prims-only) with eager; ``calls`` must appear in the
    direct trace. Returns the traces by mode."""
    expected = fn(*args, **kwargs)
    traces = {}
    for name, runner in RUNNERS.items():
        if mode not in ("both", name):
            continue
        actual, trace = runner(fn, *args, **kwargs)
        assert_same(actual, expected, **(tol or {}))
        traces[name] = trace
    if "direct" in traces:
        src = traces["direct"].python()
        for c in calls:
            assert c in src, f"{c!r} not in the trace:\n{src}"
    if "prims" in traces:
        assert "ltorch." not in traces["prims"].python(with_subsymbols=False)
    return traces


def check_raises(exc_type, fn, *args, **kwargs):
    """``fn`` raises ``exc_type`` eagerly and when traced."""
    with pytest.raises(exc_type):
        fn(*args, **kwargs)
    with pytest.raises(exc_type):
        trace_program(fn, args, kwargs)


def f32(*shape):
    return torch.randn(shape)


def i64(*shape, low=-5, high=5):
    return torch.randint(low, high, shape)


def b8(*shape):
    return torch.rand(shape) > 0.5
