"""The nvFuser executor's tests. Without a GPU (CI), nvFuser cannot even be imported: the CPU tests check the
availability logic, what is claimed and why not, and the regions and nvFuser programs formed from traces of fake
CUDA tensors (``thunder.testing.fake_cuda``: the traces a GPU run gets, compiled without running). The GPU tests
(``test_gpu_*.py``) run where the executor is available and skip elsewhere with its reason."""

import pytest

from thunder.testing.executors import available_executor, installed_executor


@pytest.fixture
def nvfuser_ex():
    """The executor, or a skip saying why it cannot run here."""
    return available_executor("nvfuser")


@pytest.fixture
def nvfuser_claims():
    """The executor, for compiling traces without running them (its availability is not asked)."""
    return installed_executor("nvfuser")
