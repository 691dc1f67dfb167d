"""Selects the opcode handler table for the running CPython version.

To add a version, write ``opcodes_3XX.py`` (copy COMMON_HANDLERS, add/override what differs,
define ``finish_delegation``, optionally ``unwind_exception``) and register it here.
"""

from __future__ import annotations

import sys

from .exception_table import unwind_to_handler as unwind_exception  # 3.11+; 3.10 has a block stack

SUPPORTED_VERSIONS = ((3, 10), (3, 11), (3, 12), (3, 13))

if sys.version_info[:2] == (3, 10):
    from .opcodes_310 import HANDLERS, finish_delegation, unwind_exception  # noqa: F401, F811
elif sys.version_info[:2] == (3, 11):
    from .opcodes_311 import HANDLERS, finish_delegation
elif sys.version_info[:2] == (3, 12):
    from .opcodes_312 import HANDLERS, finish_delegation
elif sys.version_info[:2] == (3, 13):
    from .opcodes_313 import HANDLERS, finish_delegation
else:  # interpret() reports the unsupported version
    HANDLERS = None

    def finish_delegation(frame, wresult):
        raise NotImplementedError
