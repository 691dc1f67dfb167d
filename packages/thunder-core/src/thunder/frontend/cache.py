"""Cache options and compiled entries."""

from __future__ import annotations

from enum import Enum

__all__ = ["CACHE_OPTIONS", "resolve_cache_option", "CacheEntry"]


class CACHE_OPTIONS(Enum):
    CONSTANT_VALUES = "constant values"
    SYMBOLIC_VALUES = "symbolic values"
    NO_CACHING = "no caching"
    SAME_INPUT = "same input"


def resolve_cache_option(cache) -> CACHE_OPTIONS:
    if cache is None:
        return CACHE_OPTIONS.CONSTANT_VALUES
    if isinstance(cache, CACHE_OPTIONS):
        option = cache
    else:
        try:
            option = CACHE_OPTIONS(cache)
        except ValueError:
            options = ", ".join(repr(o.value) for o in CACHE_OPTIONS)
            raise ValueError(f"unknown cache option {cache!r}; the options are {options}") from None
    return option


class CacheEntry:
    """One compiled program: its prologue (checks, returns the computation's inputs or None), its
    computation, its epilogue (None when there are no writes to replay), and the traces that made them."""

    __slots__ = ("prologue", "computation", "epilogue", "prologue_traces", "computation_traces", "epilogue_traces",
                 "backward_traces", "saved_for_backward", "compile_seconds", "reraises", "written_inputs",
                 "catches_errors")

    def __init__(self, prologue, computation, epilogue, prologue_traces, computation_traces, epilogue_traces,
                 compile_seconds, backward_traces=(), saved_for_backward=(), reraises=False):
        self.prologue, self.computation, self.epilogue = prologue, computation, epilogue
        self.prologue_traces, self.computation_traces = prologue_traces, computation_traces
        self.epilogue_traces = epilogue_traces
        # with inputs that require grad: the backward traces and the proxies the forward saves for them
        self.backward_traces, self.saved_for_backward = backward_traces, saved_for_backward
        self.compile_seconds = compile_seconds
        # the program raises (its epilogue ends with the raise) and a copy of the exception is what eager raises
        self.reraises = reraises
        # positions of the computation's inputs it may write into: their version counters tell whether a failed
        # call had updated any (set by the jit; a segmented program's runner watches its own)
        self.written_inputs: tuple = ()
        # the user's code has an exception handler: an op's run-time error may be one it catches (set by the jit)
        self.catches_errors = False
