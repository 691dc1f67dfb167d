"""The nvFuser executor's tests. Without a GPU (CI), nvFuser cannot even be imported: the CPU tests check the
availability logic, what is claimed and why not, and the regions and nvFuser programs formed from traces of fake
CUDA tensors (``thunder.testing.fake_cuda``: the traces a GPU run gets, compiled without running). The GPU tests
(``test_gpu_*.py``) run where the executor is available and skip elsewhere with its reason."""

import pytest
import torch


@pytest.fixture
def nvfuser_ex():
    """The executor, or a skip saying why it cannot run here."""
    from thunder.extend import get_executor

    ex = get_executor("nvfuser")
    assert ex is not None, "thunder-nvfuser is not installed (no 'nvfuser' entry point)"
    ok, reason = ex.availability()
    if not ok:
        pytest.skip(f"nvfuser executor unavailable: {reason}")
    return ex


@pytest.fixture
def nvfuser_claims():
    """The executor, for compiling traces without running them (its availability is not asked)."""
    from thunder.extend import get_executor

    ex = get_executor("nvfuser")
    assert ex is not None, "thunder-nvfuser is not installed (no 'nvfuser' entry point)"
    return ex


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
