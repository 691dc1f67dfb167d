"""The Triton executor's tests run where the kernels can run: on CUDA tensors with real kernels when a GPU is
present, else on CPU tensors with Triton's interpreter (``TRITON_INTERPRET=1``, what ``nox -s triton`` and CI
do). Tests take the ``device`` fixture, parametrized over both: the one this process cannot run is skipped
with the reason. Without triton, only the availability tests run.

Under the interpreter, every kernel the tests launch is also compiled ahead of time for an H100/H200 (sm_90):
``KernelRecorder`` notes each distinct launch as a GPU would compile it, and
``test_sm90_compile.py::test_every_launched_kernel_compiles_for_sm_90`` (ordered after every other test)
compiles them all and fails on any kernel the GPU compiler rejects.
"""

import contextlib
import os

import pytest
import torch

if not torch.cuda.is_available():  # before triton is imported: the interpreter is chosen then
    os.environ.setdefault("TRITON_INTERPRET", "1")

from thunder_triton.claims import interpreting  # noqa: E402

RECORDER = pytest.StashKey()
_OBSERVING = pytest.StashKey()
_SUMMARY = pytest.StashKey()
RUNS_LAST = "runs_last"


def pytest_configure(config):
    config.addinivalue_line("markers", f"{RUNS_LAST}: runs after every other test (it checks what they launched)")
    try:
        import triton  # noqa: F401
    except ImportError:
        return
    if interpreting():
        from thunder_triton.aot import KernelRecorder
        from thunder_triton.launcher import observe_launches

        recorder = config.stash[RECORDER] = KernelRecorder()
        stack = config.stash[_OBSERVING] = contextlib.ExitStack()
        stack.enter_context(observe_launches(recorder))


def pytest_terminal_summary(terminalreporter, config):
    for line in config.stash.get(_SUMMARY, []):
        terminalreporter.write_line(line)


def pytest_unconfigure(config):
    stack = config.stash.get(_OBSERVING, None)
    if stack is not None:
        stack.close()
    recorder = config.stash.get(RECORDER, None)
    if recorder is not None and recorder.pool is not None:
        recorder.pool.close()  # the check did not collect the results (stopped early): no compiling after exit


@pytest.hookimpl(trylast=True)  # after deselection (-k, -m), so the ordering sees the final list
def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.get_closest_marker(RUNS_LAST) is not None)  # stable: the rest keep order
    recorder = config.stash.get(RECORDER, None)
    checking = items and items[-1].get_closest_marker(RUNS_LAST) and not os.environ.get("PYTEST_XDIST_WORKER")
    if recorder is not None and checking:
        from thunder_triton.aot import CompilerPool

        recorder.pool = CompilerPool(recorder.target)  # the sm_90 check will run: compile while the tests run


@pytest.fixture
def triton_ex():
    from thunder.extend import get_executor

    ex = get_executor("triton")
    ok, reason = ex.availability()
    if not ok:
        pytest.skip(f"triton executor unavailable: {reason}")
    return ex


@pytest.fixture(params=["cpu", "cuda"])
def device(request) -> torch.device:
    """Where the test's tensors live: CPU under the interpreter, CUDA with real kernels (one per process:
    Triton chooses the interpreter when it is imported)."""
    if request.param == "cpu" and not interpreting():
        pytest.skip("kernels run on the GPU in this process; CPU tensors need TRITON_INTERPRET=1")
    if request.param == "cuda" and interpreting():
        pytest.skip("TRITON_INTERPRET=1 runs kernels on CPU tensors" if torch.cuda.is_available()
                    else "no CUDA device: real kernels need a GPU")
    return torch.device(request.param)


@pytest.fixture(params=[torch.float32, torch.float16, torch.bfloat16], ids=str)
def dtype(request) -> torch.dtype:
    return request.param


@pytest.fixture
def kernel_recorder(request):
    """The session's KernelRecorder, or a skip where kernels are compiled for the GPU they run on."""
    recorder = request.config.stash.get(RECORDER, None)
    if recorder is None:
        pytest.skip("kernels run on a GPU here: each is compiled for the device itself when launched")
    return recorder


@pytest.fixture
def terminal_summary(request) -> list:
    """Lines to print at the end of the run (also under -q): what a test measured, e.g. how many kernels."""
    return request.config.stash.setdefault(_SUMMARY, [])
