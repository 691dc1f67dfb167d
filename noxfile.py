"""Every supported session: tests, the demo, benchmarks. The one entry point for developers and CI.

    nox -s tests          # the full CPU test suite on Python 3.11 (what .ci/run runs)
    nox -s interpreter    # the interpreter's torch-free tests on every Python here
    nox -s demo           # jit a small GPT on CPU and compare with eager
    nox -s benchmarks     # cache-hit overhead and trace time, written to benchmarks/results/
"""

from __future__ import annotations

import os
import shutil
import subprocess

import nox

nox.options.sessions = ["interpreter", "tests"]
nox.options.reuse_existing_virtualenvs = True
nox.options.default_venv_backend = "venv"

# torch is pinned to the CPU wheel available on the project's machines; a looser requirement would let pip
# fetch a CUDA build with gigabytes of dependencies.
TORCH = os.environ.get("THUNDER_TORCH_REQUIREMENT", "torch==2.13.0")
CORE = "packages/thunder-core"
EXAMPLE_PLUGIN = "examples/thunder-example-executor"


def _expose_pyenv_pythons() -> None:
    """pyenv's shims only answer for selected versions; select the installed 3.x versions too (after the
    current one, so that plain ``python3`` keeps meaning what it meant) so that nox finds python3.12."""
    if "PYENV_VERSION" in os.environ or shutil.which("pyenv") is None:
        return
    run = lambda *cmd: subprocess.run(["pyenv", *cmd], capture_output=True, text=True).stdout.split()  # noqa: E731
    current = run("version-name")
    versions = [v for v in run("versions", "--bare") if v.startswith("3.") and v not in current]
    os.environ["PYENV_VERSION"] = ":".join(current + sorted(versions, reverse=True))


_expose_pyenv_pythons()


def _install_core(session: nox.Session, *extra: str) -> None:
    session.install(TORCH)
    # --no-deps for our packages so that no requirement can replace the pinned torch
    session.install("pluggy>=1.3", "pytest>=8", *extra)
    session.install("--no-deps", "-e", CORE)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """Unit tests of every package and the cross-package tests, with the example plugin installed."""
    _install_core(session)
    session.install("--no-deps", "-e", EXAMPLE_PLUGIN)
    session.run("pytest", "-q", "-p", "no:cacheprovider", f"{CORE}/tests", "tests", *session.posargs)


@nox.session(python=["3.11", "3.12"])
def interpreter(session: nox.Session) -> None:
    """The bytecode interpreter imports no torch: its tests run on every supported Python."""
    session.install("pytest>=8")
    session.run("pytest", "-q", "-p", "no:cacheprovider", f"{CORE}/tests/interpreter", *session.posargs,
                env={"PYTHONPATH": f"{CORE}/src"})


@nox.session(python="3.11")
def demo(session: nox.Session) -> None:
    """Jit a small GPT-style model on CPU, check it against eager, print the final trace and timings."""
    _install_core(session)
    session.run("python", "examples/demo.py", *session.posargs)


@nox.session(python="3.11")
def benchmarks(session: nox.Session) -> None:
    """Per-call overhead of eager vs thunder.jit (and torch.compile), first-call and trace times; JSON results."""
    _install_core(session)
    session.run("python", "benchmarks/overhead.py", *session.posargs)
