"""Registers the ``triton`` executor with thunder through the plugin hooks (entry-point group ``thunder``).

Importing this module never imports triton: the executor reports itself unavailable, with the reason,
when triton or a device it can run on is missing.
"""

from __future__ import annotations

from thunder.plugins import hookimpl
from thunder_triton.executor import TritonExecutor

ex = TritonExecutor()


@hookimpl
def thunder_executors():
    return [ex]


@hookimpl
def thunder_register_copy_lowering(get_executor):
    # The copy is claimed as a marker; the fusion pass folds it into the kernel computing the copied value
    # (a store straight into ``out``) or gives it back to the torch executor's copy.
    ex.register_copy_claim()
