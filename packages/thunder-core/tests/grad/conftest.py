import os
import sys

# the OpInfo helpers (opinfo_db, opinfo_expected_failures) live beside the forward conformance test
_torch_tests = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "torch"))
if _torch_tests not in sys.path:
    sys.path.append(_torch_tests)


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
