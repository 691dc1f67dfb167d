"""The Inductor executor's tests run on CPU tensors (C++ kernels); without a C++ compiler only the availability
tests run. Inductor's own on-disk caches (``TORCHINDUCTOR_CACHE_DIR``, by default ``/tmp/torchinductor_<user>``)
are kept between runs, so a second run compiles little. Graphs are small to keep the C++ compiles cheap."""

import pytest
import torch


@pytest.fixture
def inductor_ex():
    from thunder_inductor import inductor_executor

    import thunder

    ex = inductor_executor()
    ok, reason = ex.availability()
    if not ok:
        pytest.skip(f"inductor executor unavailable: {reason}")
    assert thunder.extend.get_executor("inductor") is ex, "the plugin is found through the entry-point group"
    return ex


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
