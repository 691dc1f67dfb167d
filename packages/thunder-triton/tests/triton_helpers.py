"""Shared checks: run a function through thunder.jit with the Triton executor and compare with eager."""

from __future__ import annotations

import torch

import thunder


def regions(trace) -> list:
    """The Triton region calls of a trace."""
    return [b for b in trace.bound_symbols if b.sym.id.startswith("triton.")]


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
