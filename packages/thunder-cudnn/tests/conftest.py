"""The cuDNN executor's tests. Without a GPU (CI) the CPU tests check the availability logic and the claim decisions
(what is taken and why not) on tensors and on traces of fake CUDA tensors (``thunder.testing.fake_cuda``); the GPU
tests (``test_gpu_sdpa.py``) run where the executor is available and skip elsewhere with its reason."""

import pytest

from thunder.testing.executors import available_executor, installed_executor


@pytest.fixture
def cudnn_ex():
    """The executor, or a skip saying why it cannot run here."""
    return available_executor("cudnn")


@pytest.fixture
def cudnn_claims():
    """The executor, for compiling traces without running them (its availability is not asked)."""
    return installed_executor("cudnn")
