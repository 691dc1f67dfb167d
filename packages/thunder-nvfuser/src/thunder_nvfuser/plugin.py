"""Registers the ``nvfuser`` executor with thunder through the plugin hooks (entry-point group ``thunder``).

Importing this module never imports nvFuser: the executor reports itself unavailable, with the reason and the wheel
to install, when nvFuser, a CUDA build of torch or a device is missing.
"""

from __future__ import annotations

from thunder.plugins import hookimpl
from thunder_nvfuser.executor import NvFuserExecutor

ex = NvFuserExecutor()


@hookimpl
def thunder_executors():
    return [ex]


@hookimpl
def thunder_register_copy_lowering(get_executor):
    # Claimed as a marker: the fusion pass puts the copy into the region computing the copied value (an output
    # aliased to its destination, ``add_output(value, alias_input=out)``) or gives it back to the torch executor.
    ex.register_copy_claim()
