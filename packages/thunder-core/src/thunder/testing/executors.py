"""Executors in tests: the one a test needs, or a skip that says why it cannot run here."""

from __future__ import annotations

__all__ = ["installed_executor", "available_executor"]


def installed_executor(name: str):
    """The executor ``name``, whatever its availability (for compiling traces without running them); fails when
    its package is not installed (no entry point of that name)."""
    from thunder.extend import get_executor

    ex = get_executor(name)
    assert ex is not None, f"thunder-{name} is not installed (no '{name}' entry point in the group 'thunder')"
    return ex


def available_executor(name: str):
    """The executor ``name``, or a pytest skip with the reason it cannot run here (no GPU, a missing library)."""
    import pytest

    ex = installed_executor(name)
    ok, reason = ex.availability()
    if not ok:
        pytest.skip(f"{name} executor unavailable: {reason}")
    return ex
