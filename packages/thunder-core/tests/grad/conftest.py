import os
import sys

# Run from the source tree (thunder-core need not be installed); an explicit PYTHONPATH wins.
_here = os.path.dirname(os.path.abspath(__file__))
for _p in (os.path.join(_here, "..", "..", "src"), os.path.join(_here, "..", "torch")):
    _p = os.path.abspath(_p)
    if _p not in sys.path:
        sys.path.append(_p)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: heavy variants (OpInfo conformance in more dtypes); nox -s opinfo runs them")


def pytest_terminal_summary(terminalreporter):
    """The gradient conformance figure, when test_grad_conformance ran."""
    mod = sys.modules.get("test_grad_conformance")
    if mod is None or not mod.RESULTS:
        return
    results = mod.RESULTS
    passed = [k for k, (ok, _) in results.items() if ok]
    island = sum(results[k][1] == "island" for k in passed)
    terminalreporter.write_line(
        f"{len(passed)} of {len(mod.DIFFERENTIABLE)} differentiable OpInfos match eager gradients "
        f"({len(passed) - island} by thunder's rules, {island} through the PyTorch-autograd fallback)")
