import os
import sys

# Run from the source tree (thunder-core need not be installed); an explicit PYTHONPATH wins. Nothing is
# imported here: the interpreter's tests load thunder.interpreter alone, without torch.
_src = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src"))
if _src not in sys.path:
    sys.path.append(_src)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: heavy variants (OpInfo conformance in more dtypes); nox -s opinfo runs them")
