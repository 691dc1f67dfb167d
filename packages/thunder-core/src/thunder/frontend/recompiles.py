"""What each cache miss was rejected by, and the warning when a function recompiles too often.

On a miss of a function that already has entries (a recompilation), each entry's prologue is asked which of its
checks rejected the call (``thunder.frontend.rejection``); the answers are kept in ``compile_stats(jfn).misses``
for ``thunder.examine.cache_report``. Past ``recompile_warning_limit`` recompilations (``thunder.jit`` option,
default :data:`RECOMPILE_WARNING_LIMIT`, ``None`` never warns) a :class:`RecompilationWarning` says so once per
jitted function, with the last miss's reasons, as ``torch.compile`` warns when it reaches its recompile limit.
A cache hit does none of this.
"""

from __future__ import annotations

import os
import sys
import warnings

from thunder.frontend.rejection import Rejection, explain_rejection

__all__ = ["CacheMiss", "RecompilationWarning", "RECOMPILE_WARNING_LIMIT", "MAX_KEPT_MISSES", "record_miss"]

# as torch.compile's default recompile limit (torch._dynamo.config.recompile_limit)
RECOMPILE_WARNING_LIMIT = 8
# the misses kept per function (the oldest are dropped): a storm of misses must not grow memory without bound
MAX_KEPT_MISSES = 64


class RecompilationWarning(UserWarning):
    """A jitted function recompiled more often than its ``recompile_warning_limit``."""


class CacheMiss:
    """A call that matched no cache entry: ``call`` (1 for the first call), and per entry that existed then, why
    its prologue rejected the call (``rejections[i]`` is entry ``i``'s)."""

    __slots__ = ("call", "rejections")

    def __init__(self, call: int, rejections: list[Rejection | str]):
        self.call, self.rejections = call, rejections

    def __str__(self) -> str:
        lines = [f"call {self.call}: a new entry was compiled, because"]
        lines += [f"  entry {i} rejected {r}" for i, r in enumerate(self.rejections)]
        return "\n".join(lines)

    __repr__ = __str__


def record_miss(tfn, args: tuple, kwargs: dict) -> None:
    """Called by a ThunderFunction on a miss while it has entries, before it compiles a new one."""
    rejections: list[Rejection | str] = []
    for entry in tfn.entries:
        try:
            rejection = explain_rejection(entry.prologue_traces[-1], tfn.fn, args, kwargs)
        except Exception as e:  # explaining must never break the call
            rejection = f"(could not be explained: {type(e).__name__}: {e})"
        rejections.append(rejection if rejection is not None else "nothing (its prologue accepts the call now)")
    stats = tfn.stats
    stats.misses.append(CacheMiss(stats.calls, rejections))
    del stats.misses[:-MAX_KEPT_MISSES]
    stats.recompiles += 1
    limit = tfn.recompile_warning_limit
    if limit is not None and stats.recompiles > limit and not stats.warned_recompiles:
        stats.warned_recompiles = True
        name = getattr(tfn.fn, "__qualname__", None) or type(tfn.fn).__qualname__
        hint = "" if tfn.cache_option.value != "constant values" else (
            "; cache='symbolic values' makes numbers and tensor sizes inputs instead of constants")
        warnings.warn(
            f"thunder.jit({name}) recompiled {stats.recompiles} time{'' if stats.recompiles == 1 else 's'}, more than "
            f"recompile_warning_limit={limit}. "
            f"The last {stats.misses[-1]}\nthunder.examine.cache_report(jfn) lists every entry and miss{hint}",
            RecompilationWarning, stacklevel=_stacklevel_of_caller())


_THUNDER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _stacklevel_of_caller() -> int:
    """The stack level of the first frame outside thunder: the user's call of the jitted function or module (which
    reaches here through a ThunderModule, a method of the jitted view, ...)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_THUNDER_DIR):
        frame, level = frame.f_back, level + 1
    return level
