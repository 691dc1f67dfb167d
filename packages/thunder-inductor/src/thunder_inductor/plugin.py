"""Registers the ``inductor`` executor with thunder through the plugin hooks (entry-point group ``thunder``).

Importing this module never imports torch._inductor: the executor reports itself unavailable, with the reason,
when Inductor cannot compile (no C++ compiler on CPU).
"""

from __future__ import annotations

from thunder.plugins import hookimpl
from thunder_inductor.executor import InductorExecutor

ex = InductorExecutor()


@hookimpl
def thunder_executors():
    return [ex]


@hookimpl
def thunder_register_copy_lowering(get_executor):
    # Claimed as a marker: the fusion pass puts the copy into the region computing the copied value (Inductor
    # stores into ``out``) or gives it back to the torch executor's copy.
    ex.register_copy_claim()
