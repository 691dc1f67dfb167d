"""Inspection functions of the public API (``thunder.last_traces`` and friends)."""

from __future__ import annotations

__all__ = ["last_traces", "last_prologue_traces", "last_backward_traces", "cache_hits", "cache_misses", "cache_option",
           "list_transforms", "compile_stats"]


def _function(jfn):
    from thunder.frontend.jit import ThunderFunction
    from thunder.frontend.module import ThunderModule

    if isinstance(jfn, ThunderModule):
        return jfn._tfn
    if isinstance(jfn, ThunderFunction):
        return jfn
    raise TypeError(f"expected a function or module returned by thunder.jit, got {type(jfn).__name__}")


def compile_stats(jfn):
    return _function(jfn).stats


def last_traces(jfn) -> list:
    """The computation traces of the last call: the interpreted trace, then one per transform; the last runs."""
    return compile_stats(jfn).last_traces


def last_prologue_traces(jfn) -> list:
    return compile_stats(jfn).last_prologue_traces


def last_backward_traces(jfn) -> list:
    """The backward traces of the last call (empty when it needed none): the split's backward, then one per
    transform; the last runs when gradients are computed."""
    return compile_stats(jfn).last_backward_traces


def cache_hits(jfn) -> int:
    return compile_stats(jfn).cache_hits


def cache_misses(jfn) -> int:
    return compile_stats(jfn).cache_misses


def cache_option(jfn):
    """The cache option the callable was jitted with (a ``thunder.CACHE_OPTIONS`` member)."""
    return _function(jfn).cache_option


def list_transforms(jfn) -> list:
    """The ``transforms=`` the callable was jitted with, in order."""
    return list(_function(jfn).transforms)
