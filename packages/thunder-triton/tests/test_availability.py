"""The executor is found through the plugin hooks and says whether, and why not, it can run."""

import importlib.metadata
import subprocess
import sys

import thunder
from thunder.extend import get_executor


def test_registered_through_the_entry_point():
    eps = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="thunder")}
    assert eps.get("triton") == "thunder_triton.plugin"
    ex = get_executor("triton")
    assert ex is not None and ex.kind == "fusion"
    assert ex in thunder.get_all_executors()


def test_unavailable_without_a_device_says_why():
    # a fresh process without the interpreter: on a machine with no CUDA device the reason names it
    code = ("from thunder.extend import get_executor; import thunder, torch\n"
            "ok, reason = get_executor('triton').availability()\n"
            "assert ok == torch.cuda.is_available(), (ok, reason)\n"
            "assert ok or 'CUDA' in reason, reason\n"
            "names = [e.name for e in thunder.get_default_executors()]\n"
            "assert ('triton' in names) == ok, names\n"
            "f = thunder.jit(lambda x: x.sin() + 1); x = torch.randn(3)\n"
            "assert torch.allclose(f(x), x.sin() + 1)\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_available_under_the_interpreter(triton_ex):
    assert triton_ex.availability() == (True, "")
    assert "triton" in [e.name for e in thunder.get_default_executors()]
