"""``thunder_profile`` / ``thunder_optimize``: compile only the graphs worth it, with the faster of thunder and eager.

``pfn = thunder_profile(fn)`` runs ``fn`` under torch.compile, with every captured graph running eagerly while
counting its calls per input metadata. ``thunder_optimize(pfn)`` ends profiling: each graph the filter selects
(by default, called at least twice) is given to the optimizer (by default: timed eagerly and compiled by
ThunderCompiler on the inputs of its last call, the faster kept); the others stay eager. It returns the
torch.compile'd callable; the profiling callable refuses further calls.
"""

from __future__ import annotations

import collections
import dataclasses
import time

import torch

__all__ = ["thunder_profile", "thunder_optimize", "ProfileStats", "default_filter", "default_optimizer"]


@dataclasses.dataclass
class ProfileStats:
    gm: torch.fx.GraphModule
    input_meta_to_called_times: dict = dataclasses.field(default_factory=lambda: collections.defaultdict(int))
    last_inputs: tuple = ()


class _Profiler:
    def __init__(self):
        self.is_profiling = True
        self.dispatch_map: dict = {}  # graph id -> what runs it now
        self.id_to_gm_map: dict = {}
        self.id_to_profile_stats: dict = {}


def _meta(args) -> tuple:
    return tuple((tuple(a.shape), a.dtype, a.device, a.requires_grad) if isinstance(a, torch.Tensor) else a
                 for a in args)


def thunder_profile(fn):
    profiler = _Profiler()

    def backend(gm, example_inputs):
        key = id(gm)
        profiler.id_to_gm_map[key] = gm
        profiler.id_to_profile_stats[key] = ProfileStats(gm)

        def record(*args):
            stats = profiler.id_to_profile_stats[key]
            stats.input_meta_to_called_times[_meta(args)] += 1
            stats.last_inputs = args
            return gm(*args)

        profiler.dispatch_map[key] = record
        return lambda *args: profiler.dispatch_map[key](*args)

    torch._dynamo.reset()  # graphs compiled earlier with other backends would bypass the profiler
    compiled = torch.compile(fn, backend=backend)

    def profiling_callable(*args, **kwargs):
        if not profiler.is_profiling:
            raise AssertionError("profiling has ended (thunder_optimize was called); call what it returned")
        return compiled(*args, **kwargs)

    profiling_callable._compiled_fn = compiled
    profiling_callable._tao = profiler
    return profiling_callable


def default_filter(profiling_callable, cutoff: int = 2) -> set:
    """The graphs called at least ``cutoff`` times."""
    stats = profiling_callable._tao.id_to_profile_stats
    return {key for key, s in stats.items() if sum(s.input_meta_to_called_times.values()) >= cutoff}


def _time(fn, args, repeats: int = 5) -> float:
    fn(*args)  # warm-up (and compilation)
    start = time.perf_counter()
    for _ in range(repeats):
        fn(*args)
    return (time.perf_counter() - start) / repeats


def default_optimizer(gm: torch.fx.GraphModule, stats: ProfileStats):
    """The graph compiled by ThunderCompiler when that runs its last recorded inputs faster than eager, else the
    graph itself. Inputs are the recorded ones (no data is invented)."""
    from thunder.dynamo.compiler import ThunderCompiler

    args = stats.last_inputs
    with torch.no_grad():
        compiled = ThunderCompiler()(gm, list(args))
        return compiled if _time(compiled, args) < _time(gm, args) else gm


def thunder_optimize(profiling_callable, *, gm_filter=default_filter, optimizer=default_optimizer):
    profiler = profiling_callable._tao
    chosen = gm_filter(profiling_callable)
    for key in profiler.dispatch_map:
        gm = profiler.id_to_gm_map[key]
        if key in chosen:
            try:
                profiler.dispatch_map[key] = optimizer(gm, profiler.id_to_profile_stats[key])
            except NotImplementedError:
                profiler.dispatch_map[key] = gm  # the optimizer cannot take it: it stays eager
        else:
            profiler.dispatch_map[key] = gm
    profiler.is_profiling = False
    return profiling_callable._compiled_fn
