"""The executor is found through the plugin hooks and says whether, and why not, it can run; ``import thunder``
and jitted attention work without it."""

import pytest
from thunder_cudnn.availability import Runtime, decide

from thunder.testing.executors import assert_default_only_if_available, assert_listed_with_availability, assert_registered

# (torch, cuda, devices, frontend error, library error, runtime) -> (available, words the reason must contain)
DECISIONS = [
    (("2.13.0+cpu", None, 0, None, None, Runtime()), (False, ["CPU-only build"])),
    (("2.11.0+cu130", "13.0", 0, None, None, Runtime()), (False, ["no CUDA device"])),
    (("2.11.0+cu130", "13.0", 1, "ModuleNotFoundError: No module named 'cudnn'", None, Runtime()),
     (False, ["frontend is not installed", "pip install nvidia-cudnn-frontend"])),
    (("2.11.0+cu130", "13.0", 1, None, "OSError: libcudnn.so.9: cannot open", Runtime()),
     (False, ["libcudnn.so.9", "pip install nvidia-cudnn-cu13"])),
    (("2.4.0+cu121", "12.1", 1, None, None, Runtime(8907, (8, 0))), (False, ["cuDNN 8.9.7", "older than 9.0"])),
    (("2.11.0+cu130", "13.0", 1, None, None, Runtime(91000, (7, 5))), (False, ["sm_75", "sm_80"])),
    (("2.11.0+cu130", "13.0", 1, None, None, Runtime(91000, (9, 0))), (True, [])),
]


@pytest.mark.parametrize("inputs, expected", DECISIONS, ids=[str(i) for i in range(len(DECISIONS))])
def test_decide(inputs, expected):
    ok, reason = decide(*inputs)
    verdict, words = expected
    assert ok is verdict, reason
    for w in words:
        assert w in reason, (w, reason)


def test_registered_through_the_entry_point():
    assert_registered("cudnn", "thunder_cudnn.plugin", "operator")


def test_unavailable_here_says_why_and_thunder_still_runs():
    assert_default_only_if_available("cudnn", check=(
        "import torch.nn.functional as F\n"
        "q = torch.randn(1, 2, 8, 16)\n"
        "f = thunder.jit(lambda q: F.scaled_dot_product_attention(q, q, q, is_causal=True))\n"
        "torch.testing.assert_close(f(q), F.scaled_dot_product_attention(q, q, q, is_causal=True))\n"))


def test_listed_by_python_m_thunder_executors():
    assert_listed_with_availability("cudnn")
