"""Registers the ``example`` executor with thunder through the ``thunder_executors`` hook."""

from thunder.extend import OperatorExecutor
from thunder.plugins import hookimpl

ex = OperatorExecutor("example", priority=100, version="0.1.0")
sigmoid = ex.register_operator("thunder_example_executor.ops.sigmoid")


def _floating_tensor(a) -> bool:
    return getattr(a, "dtype", None) is not None and a.dtype.kind == "float"


ex.register_implementation("ltorch.sigmoid", sigmoid, checker=_floating_tensor)


@hookimpl
def thunder_executors():
    return [ex]
