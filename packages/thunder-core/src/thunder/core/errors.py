"""Errors thunder raises for user programs, and ``check``: the one way metas validate inputs."""

from __future__ import annotations

__all__ = ["check", "ThunderError", "UnsupportedError", "user_location_suffix", "read_in_sub_program"]


class ThunderError(Exception):
    """Base of thunder's own errors."""


class UnsupportedError(ThunderError, NotImplementedError):
    """A construct or operation the jit does not support yet; the message says which, where, and what to do."""


class ReadInsideRegionError(UnsupportedError):
    """A value computed from tensor data is needed inside a region traced as one operation, where the program
    cannot be split. A symbol whose decomposition asks for it reads its data-dependent arguments before it
    instead, where it is called at the top level (``Symbol.__call__``)."""


def user_location_suffix() -> str:
    """' (at file:line: source)' for the line currently being traced, with the user's own line that called into it
    when that is library code; or ''."""
    from thunder.core.trace import get_tracectx

    trace = get_tracectx()
    loc = trace.current_location() if trace is not None else None
    if loc is None:
        return ""
    user = trace.user_location()
    # inside a library (torch's Python code, transformers): the user's line that led there too
    return f" (at {loc}, called from {user})" if user is not None and user != loc else f" (at {loc})"


def read_in_sub_program(what: str, instead: str = "keep it a tensor (torch.where)") -> UnsupportedError:
    """The refusal of a value read from tensor data inside a sub-program traced apart from the program (a torch.cond
    branch, a while_loop body), where the program cannot be split; ``what`` says what needs which value ("bool() of
    a tensor needs its value")."""
    return UnsupportedError(
        f"{what}{user_location_suffix()}, which a sub-program (a torch.cond branch, a checkpointed or while_loop "
        "region, an autograd.Function, a nested function transform) cannot read while it is traced: the program can "
        f"only be split at the top level; move the read out of the region or {instead}")


def check(condition, message, exception_type: type[Exception] = RuntimeError) -> None:
    """Raises ``exception_type`` with the message (a string or a thunk) when ``condition`` is false.

    Metas use the exception types PyTorch uses for the same mistake, so user code that catches
    them behaves as in eager.
    """
    if not condition:
        raise exception_type(message() if callable(message) else message)
