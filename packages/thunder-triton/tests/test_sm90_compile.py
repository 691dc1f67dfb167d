"""Ahead-of-time compilation for an H100/H200 (sm_90) with no GPU present.

The interpreter runs kernels the GPU compiler rejects. Every kernel the other tests launched is compiled for
sm_90 here, as a GPU launch with the same arguments would compile it (and with the GPU's block sizes), and
must fit the device's shared memory and registers. The hand-written kernels below show that the check fails
on what the interpreter accepts and the compiler does not.
"""

import os

import pytest
import torch
from thunder_triton import aot
from thunder_triton.launcher import launch_options, observe_launches
from triton_helpers import check

pytestmark = pytest.mark.usefixtures("triton_ex")

KERNELS = os.path.join(os.path.dirname(__file__), "interpreter_only_kernels.py")


@pytest.mark.runs_last
def test_every_launched_kernel_compiles_for_sm_90(kernel_recorder, terminal_summary):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("under pytest -n each worker records only its own tests' kernels: run the check in one process")
    if not kernel_recorder.jobs:
        pytest.skip("no kernel was launched before this test: run it with the tests that launch kernels")
    results = kernel_recorder.results()
    failed = [r for r in results if r.error]
    local = [r for r in results if r.local_bytes]
    kernels = len({r.job.name for r in results})
    terminal_summary.append(
        f"{len(results) - len(failed)} kernels compiled for sm_{kernel_recorder.target.arch} "
        f"({kernels} generated kernels in {len(results)} specializations, {kernel_recorder.launches} launches; "
        f"{len(failed)} failed; {len(local)} use local memory; "
        f"most registers per thread: {max(r.registers for r in results)})")
    for r in local:  # not an error; spilled registers would be slow on a GPU: what tuning looks at first
        terminal_summary.append(f"  uses {r.local_bytes} bytes of local memory per thread ({r.registers} registers): "
                                f"{r.job.describe()}")
    assert not failed, "kernels the sm_90 compiler rejects:\n" + "\n\n".join(
        f"{r.job.describe()}\n  {r.error}" for r in failed)


def _job(name, args, **options):
    return aot.job_for_launch(name, KERNELS, args, dict(num_warps=4) | options)


def test_a_kernel_calling_plain_python_runs_interpreted_but_fails_to_compile(kernel_recorder):
    import interpreter_only_kernels as k

    x, out = torch.randn(100), torch.empty(100)
    k.calls_python[(1,)](x, out, 100, BLOCK=128)
    torch.testing.assert_close(out, x * 2)  # the interpreter accepts it and computes the right thing
    (result,) = aot.compile_jobs([_job("calls_python", (x, out, 100), BLOCK=128)])
    assert "Unsupported function referenced" in result.error and "twice" in result.error


def test_a_kernel_needing_more_shared_memory_than_sm_90_has_fails(kernel_recorder):
    import interpreter_only_kernels as k

    a, b, c = torch.randn(256, 256, dtype=torch.float16), torch.randn(256, 256, dtype=torch.float16), torch.empty(256, 256)
    k.matmul[(1,)](a, b, c, N=256)
    torch.testing.assert_close(c, (a.float() @ b.float()), atol=1e-2, rtol=1e-2)
    (result,) = aot.compile_jobs([_job("matmul", (a, b, c), N=256, num_warps=8)])
    assert result.error == "needs 262144 bytes of shared memory; sm_90 has 232448 per block"


def test_launches_are_recorded_with_the_gpu_block_sizes_and_argument_types(kernel_recorder):
    def f(x, y):
        return x.float() * torch.sigmoid(y) + 1

    with observe_launches(aot.KernelRecorder()) as recorder:
        check(f, torch.randn(5000, dtype=torch.bfloat16), torch.randn(5000))
    (new,) = recorder.jobs.values()
    gpu = launch_options(5000, None, interpreter=False)
    assert gpu["XBLOCK"] != launch_options(5000, None, interpreter=True)["XBLOCK"]
    # unit strides and the scalar 1 are constants of the kernel, as on a GPU (Triton specializes integers equal to 1)
    assert new.constexprs_by_name()["XBLOCK"] == gpu["XBLOCK"] and dict(new.options) == {"num_warps": 4}
    assert [t for t in new.signature.values() if t.startswith("*")] == ["*bf16", "*fp32", "*fp32"]
    (result,) = aot.compile_jobs([new])
    assert result.error is None and result.registers > 0
