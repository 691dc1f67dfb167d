"""A region as a TorchInductor-compiled FX graph.

The region's prims are lowered with the torch executor (the very torch calls it would make) into a small trace;
on the first call with given input metadata, that trace is recorded as an FX graph by ``make_fx`` and compiled
by ``torch._inductor.standalone_compile`` (Inductor's FX-graph and kernel caches apply, so an identical region
compiles from disk). The compiled artifact is also saved under Inductor's cache directory, keyed by the region's
printed source and input key (``disk_cache``): a second process loads it without recording the graph again, which
is most of a warm first call. Where the trace's sizes are symbolic (``cache="symbolic values"``), the
graph is recorded with symbolic sizes and compiled once for every size with the same pattern of equal sizes
and 0/1 sizes, which is what Inductor's compiled code assumes. Numbers the region takes (scalars, sizes given
to reshapes) are baked into the graph and part of the key.
"""

from __future__ import annotations

import itertools
import threading

from thunder.core.proxies import NumberProxy
from thunder.core.symbol import Symbol
from thunder.core.trace import TraceCtx
from thunder_inductor import disk_cache

__all__ = ["region_fusion", "InductorFusion", "stats"]

_counter = itertools.count()
_lock = threading.Lock()
_stats = {"compiles": 0, "loads": 0}


def stats() -> dict:
    """{'compiles': graphs compiled by Inductor in this process, 'loads': compiled graphs loaded from disk}."""
    return dict(_stats)


def region_fusion(executor, prims_, tensor_inputs, number_inputs, outputs) -> Symbol:
    """The symbol that runs one region: prints as ``inductor_fusion_N(...)`` with the region's prims as comments."""
    from thunder.extend.claiming import fallback_lower

    trace = TraceCtx("region")
    trace.args = [*tensor_inputs, *number_inputs]
    for p in trace.args:
        trace.names.add(p.name)
    for b in prims_:
        trace.bound_symbols.extend(fallback_lower(b, "thunder_inductor"))
    trace.output = tuple(outputs)
    symbolic = any(isinstance(d, NumberProxy) for t in tensor_inputs for d in t.shape)
    name = f"inductor_fusion_{next(_counter)}"
    fusion = InductorFusion(name, trace, len(tensor_inputs), symbolic)
    writes_inputs = any(b.sym.id == "prims.copy_to_out_" for b in prims_)
    return Symbol(name, id=f"inductor.{name}", is_prim=True, executor=executor, call_ctx={name: fusion},
                  tags=("side_effect",) if writes_inputs else ())


# emulate_precision_casts: a low-precision (bfloat16, float16) intermediate is rounded to its dtype, as eager rounds
# each op's result, instead of staying float32 through the kernel (fuzz seed 7254: bfloat16 subnormals halved)
INDUCTOR_CONFIG = {"emulate_precision_casts": True}


def _size_pattern(values):
    """Sizes, strides and offsets up to renaming, keeping 0 and 1: what a graph with symbolic sizes assumes."""
    classes: dict[int, int] = {}
    return tuple(v if v in (0, 1) else classes.setdefault(v, len(classes) + 2) for v in values)


class InductorFusion:
    """Runs a region: compiles it for each new input key, then calls the compiled graph."""

    def __init__(self, name: str, trace: TraceCtx, n_tensors: int, symbolic: bool):
        self.name, self.trace, self.n_tensors, self.symbolic = name, trace, n_tensors, symbolic
        self.compiled: dict = {}
        self.codes: dict = {}  # input key -> the code of the FX graph compiled for it

    def graph_codes(self) -> list[str]:
        return list(self.codes.values())

    def key(self, tensors, numbers):
        dtypes_ = tuple((t.dtype, t.device) for t in tensors)
        layout = tuple(v for t in tensors for v in (*t.shape, *t.stride(), t.storage_offset()))
        return dtypes_, _size_pattern(layout) if self.symbolic else layout, numbers

    def __call__(self, *args):
        import torch

        tensors, numbers = args[:self.n_tensors], args[self.n_tensors:]
        key = self.key(tensors, numbers)
        fn = self.compiled.get(key)
        if fn is None:
            with _lock:
                fn = self.compiled.get(key)
                if fn is None:
                    fn = self.compiled[key] = self._compile(key, tensors, numbers)
        with torch.no_grad():  # thunder's autograd runs around regions; Inductor builds no graph of its own
            return fn(*tensors)

    def _compile(self, key, tensors, numbers):
        from torch._inductor import config

        with config.patch(INDUCTOR_CONFIG):  # part of the saved region's key too
            return self._load_or_compile(key, tensors, numbers)

    def _load_or_compile(self, key, tensors, numbers):
        saved = disk_cache.path(self.trace, key)
        loaded = disk_cache.load(saved) if saved else None
        if loaded is not None:
            compiled, self.codes[key] = loaded
            _stats["loads"] += 1
            return compiled
        compiled, self.codes[key] = self._record_and_compile(tensors, numbers)
        _stats["compiles"] += 1
        if saved:
            disk_cache.save(saved, compiled, self.codes[key])
        return compiled

    def _record_and_compile(self, tensors, numbers):
        import torch
        from torch._inductor import standalone_compile
        from torch.fx.experimental.proxy_tensor import make_fx

        region = self.trace.python_callable()

        def graph_fn(*ts):
            return region(*ts, *numbers)

        examples = [t.detach() for t in tensors]
        with torch.no_grad():
            gm = make_fx(graph_fn, tracing_mode="symbolic" if self.symbolic else "fake")(*examples)
            compiled = standalone_compile(gm, examples,
                                          dynamic_shapes="from_graph" if self.symbolic else "from_example_inputs")
        return compiled, gm.code
