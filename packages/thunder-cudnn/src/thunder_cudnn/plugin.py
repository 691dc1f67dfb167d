"""Registers the ``cudnn`` executor with thunder through the plugin hooks (entry-point group ``thunder``).

Importing this module never imports the cuDNN frontend: the executor reports itself unavailable, with the reason,
when there is no GPU, no cuDNN library or no frontend.
"""

from __future__ import annotations

from thunder.plugins import hookimpl
from thunder_cudnn.executor import ex


@hookimpl
def thunder_executors():
    return [ex]
