"""Shared checks: run a function through thunder.jit with the Triton executor and compare with eager."""

from __future__ import annotations

import torch

import thunder


def regions(trace) -> list:
    """The Triton region calls of a trace."""
    return [b for b in trace.bound_symbols if b.sym.id.startswith("triton.")]


# Eager rounds after every op of a decomposition to the tensor's dtype; a fused kernel computes in float32 and
# rounds once where the trace has a half-precision value: they agree to a few units in the last place.
TOLERANCES = {torch.float32: {}, torch.float16: dict(atol=1e-2, rtol=1e-2),
              torch.bfloat16: dict(atol=2e-2, rtol=2e-2)}


def tolerances(dtype, scale: float = 1.0) -> dict:
    """assert_close's tolerances for comparing a fused ``dtype`` computation with eager (``scale`` widens them
    for long chains, e.g. a whole transformer block)."""
    return {k: v * scale for k, v in TOLERANCES[dtype].items()}


def assert_close_in_norm(actual, expected, dtype, msg: str = "") -> None:
    """||actual - expected|| / ||expected|| within what ``dtype`` allows: for results of long chains (a model's
    outputs and gradients), where single elements near zero make elementwise tolerances meaningless."""
    if dtype is torch.float32:
        torch.testing.assert_close(actual, expected, msg=msg or None)
        return
    error = (actual.double() - expected.double()).norm() / expected.double().norm().clamp_min(1e-30)
    bound = {torch.float16: 1e-2, torch.bfloat16: 3e-2}[dtype]
    assert torch.isfinite(actual).all() and error <= bound, f"{msg} relative error {error:.2e} > {bound:.0e}"


def jit_triton(fn, **kw):
    return thunder.jit(fn, executors=["triton"], **kw)


def check(fn, *args, min_regions: int = 1, atol=None, rtol=None, **kw):
    """Jitted output equals eager's; the final trace has at least ``min_regions`` Triton regions. Returns the jitted fn."""
    jfn = jit_triton(fn, **kw)
    actual = jfn(*args)
    expected = fn(*args)
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol)
    found = regions(thunder.last_traces(jfn)[-1])
    assert len(found) >= min_regions, thunder.last_traces(jfn)[-1]
    return jfn
