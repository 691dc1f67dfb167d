"""Executors in tests: the one a test needs, or a skip that says why it cannot run here."""

from __future__ import annotations

__all__ = ["installed_executor", "available_executor", "assert_registered", "assert_listed_with_availability",
           "assert_default_only_if_available", "JIT_RUNS_LIKE_EAGER"]


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


def assert_registered(name: str, module: str, kind: str) -> None:
    """The executor ``name`` is found through the entry-point group ``thunder`` (pointing at ``module``), is of
    ``kind`` ("fusion", "operator") and among thunder's executors."""
    import importlib.metadata

    import thunder

    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="thunder")}
    assert eps.get(name) == module, eps
    ex = installed_executor(name)
    assert ex.kind == kind and ex in thunder.get_all_executors()


def assert_listed_with_availability(name: str) -> None:
    """``python -m thunder executors`` lists ``name`` as available, or with the reason it is not."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "thunder", "executors"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith(name))
    ok, reason = installed_executor(name).availability()
    assert ("available" if ok else reason) in line, line


# a jitted program (with the default executors) equals eager, values, dtype and shape
JIT_RUNS_LIKE_EAGER = ("f = thunder.jit(lambda x: x.sin() + 1); x = torch.randn(3)\n"
                       "torch.testing.assert_close(f(x), x.sin() + 1, rtol=0, atol=0)\n")


def assert_default_only_if_available(name: str, *, reason_has: tuple[str, ...] = (), check: str = JIT_RUNS_LIKE_EAGER,
                                     drop_env: tuple[str, ...] = ()) -> None:
    """In a fresh process (as a user without the executor's runtime has it, ``drop_env`` unset): ``name`` is a
    default executor exactly when it is available, says why when it is not (the reason contains one of
    ``reason_has``, or is not empty) and ``check``, Python run after ``import thunder, torch`` with ``ok`` and
    ``reason`` bound, passes (by default: a jitted program equals eager without the executor)."""
    import os
    import subprocess
    import sys

    says_why = f"any(w in reason for w in {reason_has!r})" if reason_has else "reason"
    code = ("import thunder, torch\n"
            "from thunder.extend import get_executor\n"
            f"ok, reason = get_executor({name!r}).availability()\n"
            "names = [e.name for e in thunder.get_default_executors()]\n"
            f"assert ({name!r} in names) == ok, names\n"
            f"assert ok or {says_why}, reason\n"
            + check)
    env = {k: v for k, v in os.environ.items() if k not in drop_env}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
