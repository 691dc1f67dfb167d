"""Executors come from plugins (entry-point group ``thunder``), built-in ones included."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import thunder
from thunder.extend import get_all_executors


def test_builtin_executors_are_registered_through_the_hooks():
    from thunder.plugins.manager import get_plugin_manager

    pm = get_plugin_manager()
    names = {pm.get_name(p) for p in pm.get_plugins()}
    assert {"torch", "python"} <= names
    assert {"torch", "python"} <= {e.name for e in get_all_executors()}


def _example_installed() -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        version("thunder-example-executor")
    except PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _example_installed(), reason="examples/thunder-example-executor is not installed "
                    "(nox -s tests installs it)")
def test_third_party_executor_claims_its_operator():
    x = torch.randn(4, 8)
    jfn = thunder.jit(lambda x: torch.sigmoid(x) * 2)
    torch.testing.assert_close(jfn(x), torch.sigmoid(x) * 2)
    final = str(thunder.last_traces(jfn)[-1])
    assert "thunder_example_executor.ops.sigmoid(" in final
    # only floating tensors are claimed: integers fall back to torch
    xi = torch.arange(4)
    jfn_int = thunder.jit(lambda x: torch.sigmoid(x))
    torch.testing.assert_close(jfn_int(xi), torch.sigmoid(xi))
    assert "thunder_example_executor" not in str(thunder.last_traces(jfn_int)[-1])
    # bfloat16 rounds once, as eager's sigmoid: the very same values (fuzzer seed 65148)
    xb = torch.randn(4096).bfloat16()
    assert torch.equal(thunder.jit(torch.sigmoid)(xb), torch.sigmoid(xb))


@pytest.mark.skipif(not _example_installed(), reason="examples/thunder-example-executor is not installed")
def test_executors_option_selects_the_executor():
    x = torch.randn(3)
    jfn = thunder.jit(lambda x: torch.sigmoid(x), executors=["torch"])
    torch.testing.assert_close(jfn(x), torch.sigmoid(x))
    assert "thunder_example_executor" not in str(thunder.last_traces(jfn)[-1])
    assert "torch.sigmoid(" in str(thunder.last_traces(jfn)[-1])


def test_unknown_executor_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown executor 'nope'"):
        thunder.jit(lambda x: x, executors=["nope"])


def _run_with_fake_plugin(tmp_path, plugin_source: str, code: str) -> subprocess.CompletedProcess:
    """Runs ``code`` in a fresh interpreter that sees a distribution advertising ``plugin_source`` as a
    thunder plugin through real entry-point metadata."""
    site = tmp_path / "site"
    (site / "fakeplugin").mkdir(parents=True)
    (site / "fakeplugin" / "__init__.py").write_text(textwrap.dedent(plugin_source))
    dist = site / "fakeplugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[thunder]\nfake = fakeplugin\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), *sys.path]))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_plugin_that_fails_to_import_never_breaks_thunder(tmp_path):
    res = _run_with_fake_plugin(
        tmp_path,
        "import some_runtime_that_is_not_installed\n",
        "import torch, thunder\n"
        "print(thunder.jit(lambda x: x + 1)(torch.ones(2)).tolist())\n"
        "from thunder.__main__ import list_executors; list_executors()\n",
    )
    assert res.returncode == 0, res.stderr
    assert "[2.0, 2.0]" in res.stdout
    assert "fake" in res.stdout and "plugin failed to load" in res.stdout
    assert "some_runtime_that_is_not_installed" in res.stdout


def test_executor_with_missing_runtime_reports_the_reason(tmp_path):
    plugin = '''
        from thunder.extend import OperatorExecutor
        from thunder.plugins import hookimpl

        class NeedsGPU(OperatorExecutor):
            def availability(self):
                return False, "needs a CUDA device, none found"

        @hookimpl
        def thunder_executors():
            return [NeedsGPU("needsgpu", priority=50)]
    '''
    res = _run_with_fake_plugin(
        tmp_path, plugin,
        "import torch, thunder\n"
        "assert 'needsgpu' not in [e.name for e in thunder.get_default_executors()]\n"
        "print(thunder.jit(lambda x: x * 2)(torch.ones(2)).tolist())\n"
        "from thunder.__main__ import list_executors; list_executors()\n",
    )
    assert res.returncode == 0, res.stderr
    assert "needsgpu" in res.stdout and "unavailable: needs a CUDA device, none found" in res.stdout


def test_cli_lists_executors():
    res = subprocess.run([sys.executable, "-m", "thunder", "executors"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split()[:4] == ["name", "kind", "priority", "default"]
    torch_line = next(line for line in lines if line.startswith("torch "))
    assert "operator" in torch_line and "available" in torch_line
