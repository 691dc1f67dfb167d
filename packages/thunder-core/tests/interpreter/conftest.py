"""Load thunder.interpreter without running thunder/__init__.py (which imports torch).

The interpreter depends only on the standard library, so these tests run on every supported
Python even where torch is not installed.
"""

import importlib.util
import pathlib
import sys

_PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[2] / "src" / "thunder" / "interpreter"


def _load_interpreter():
    if "thunder.interpreter" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        "thunder.interpreter", _PACKAGE_DIR / "__init__.py", submodule_search_locations=[str(_PACKAGE_DIR)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["thunder.interpreter"] = module
    spec.loader.exec_module(module)


_load_interpreter()
