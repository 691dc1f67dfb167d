"""The cuDNN executor's tests. Without a GPU (CI) the CPU tests check the availability logic and the claim decisions
(what is taken and why not) on tensors and on traces of fake CUDA tensors (``thunder.testing.fake_cuda``); the GPU
tests (``test_gpu_sdpa.py``) run where the executor is available and skip elsewhere with its reason."""

import pytest


@pytest.fixture
def cudnn_ex():
    """The executor, or a skip saying why it cannot run here."""
    from thunder.extend import get_executor

    ex = get_executor("cudnn")
    assert ex is not None, "thunder-cudnn is not installed (no 'cudnn' entry point)"
    ok, reason = ex.availability()
    if not ok:
        pytest.skip(f"cudnn executor unavailable: {reason}")
    return ex


@pytest.fixture
def cudnn_claims():
    """The executor, for compiling traces without running them (its availability is not asked)."""
    from thunder.extend import get_executor

    ex = get_executor("cudnn")
    assert ex is not None, "thunder-cudnn is not installed (no 'cudnn' entry point)"
    return ex
