"""The Triton executor's tests run kernels on CPU tensors with Triton's interpreter (``TRITON_INTERPRET=1``,
set by ``nox -s triton``); without triton or a device, only the availability tests run."""

import os

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported: the interpreter is chosen then


@pytest.fixture
def triton_ex():
    from thunder.extend import get_executor

    ex = get_executor("triton")
    ok, reason = ex.availability()
    if not ok:
        pytest.skip(f"triton executor unavailable: {reason}")
    return ex
