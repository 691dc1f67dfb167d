"""The executor is found through the plugin hooks and says whether, and why not, it can run."""

import thunder
from thunder.testing.executors import JIT_RUNS_LIKE_EAGER, assert_default_only_if_available, assert_registered


def test_registered_through_the_entry_point():
    assert_registered("triton", "thunder_triton.plugin", "fusion")


def test_unavailable_without_a_device_says_why():
    # without the interpreter: on a machine with no CUDA device the reason names it
    assert_default_only_if_available("triton", reason_has=("CUDA",), check=(
        "assert ok == torch.cuda.is_available(), (ok, reason)\n" + JIT_RUNS_LIKE_EAGER), drop_env=("TRITON_INTERPRET",))


def test_available_under_the_interpreter(triton_ex):
    assert triton_ex.availability() == (True, "")
    assert "triton" in [e.name for e in thunder.get_default_executors()]
