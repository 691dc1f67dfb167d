"""A region as a TorchInductor-compiled FX graph.

The region's prims are lowered with the torch executor (the very torch calls it would make) into a small trace;
on the first call with given input metadata, that trace is recorded as an FX graph by ``make_fx`` and compiled
by ``torch._inductor.standalone_compile`` (Inductor's FX-graph and kernel caches apply, so an identical region
compiles from disk). The compiled artifact is also saved under Inductor's cache directory, keyed by the region's
printed source and input key (``disk_cache``): a second process loads it without recording the graph again, which
is most of a warm first call. Where the trace's sizes are symbolic (``cache="symbolic values"``), the
graph is recorded with symbolic sizes and compiled once for every size with the same pattern of equal sizes
and 0/1 sizes, which is what Inductor's compiled code assumes. Numbers the region takes (scalars, sizes given
to reshapes) are baked into the graph and part of the key, until an integer is seen with a second value (a decode
step's position): from then on it is an input of the graph, symbolic like the sizes (Dynamo's "automatic
dynamic"), so a decode loop compiles each region twice, not once per position. The graph's shape guards (what
recording assumed about those integers: a slice end within its tensor's size) are checked on each call; a call
that breaks them runs the region's torch calls instead.
"""

from __future__ import annotations

import itertools
import threading
from itertools import chain
from operator import attrgetter, methodcaller

from thunder.core.proxies import NumberProxy
from thunder.core.symbol import Symbol
from thunder.core.trace import TraceCtx
from thunder_inductor import disk_cache

__all__ = ["region_fusion", "InductorFusion", "stats"]

_counter = itertools.count()
_dtype_device = attrgetter("dtype", "device")
_stride, _offset = methodcaller("stride"), methodcaller("storage_offset")
_lock = threading.Lock()
_stats = {"compiles": 0, "loads": 0, "guard_failures": 0}


def stats() -> dict:
    """{'compiles': graphs compiled by Inductor in this process, 'loads': compiled graphs loaded from disk,
    'guard_failures': calls that broke their graph's shape guards and ran the region's torch calls}."""
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
    """Sizes, strides and offsets up to renaming, keeping 0 and 1: what a graph with symbolic sizes assumes. (Run on
    every call of a region: the loops over the values are ``dict.fromkeys`` and ``map``, not Python's.)"""
    names = {v: i for i, v in enumerate((v for v in dict.fromkeys(values) if v != 0 and v != 1), 2)}
    names[0], names[1] = 0, 1
    return tuple(map(names.__getitem__, values))


def _layout(tensors) -> tuple:
    """The sizes, then the strides, then the storage offsets of ``tensors``, flat."""
    return (*chain.from_iterable(t.shape for t in tensors), *chain.from_iterable(map(_stride, tensors)),
            *map(_offset, tensors))


class InductorFusion:
    """Runs a region: compiles it for each new input key, then calls the compiled graph."""

    def __init__(self, name: str, trace: TraceCtx, n_tensors: int, symbolic: bool):
        self.name, self.trace, self.n_tensors, self.symbolic = name, trace, n_tensors, symbolic
        self.compiled: dict = {}  # input key -> (compiled graph, its guard or None)
        self.codes: dict = {}  # input key -> the code of the FX graph compiled for it
        # positions (among the numbers) of the integers seen with a second value: inputs of the graph
        self.dynamic: tuple[int, ...] = ()
        self.first_numbers: tuple | None = None
        self.fallback = None  # the region's torch calls, for a call that breaks its graph's guards

    def graph_codes(self) -> list[str]:
        return list(self.codes.values())

    def key(self, tensors, numbers):
        dtypes_ = tuple(map(_dtype_device, tensors))
        layout = _layout(tensors)
        if not self.symbolic:
            return dtypes_, layout, numbers
        dynamic = tuple(numbers[i] for i in self.dynamic)
        static = tuple(n for i, n in enumerate(numbers) if i not in self.dynamic) if dynamic else numbers
        return dtypes_, _size_pattern(layout + dynamic), static, self.dynamic

    def __call__(self, *args):
        import torch

        tensors, numbers = args[:self.n_tensors], args[self.n_tensors:]
        key = self.key(tensors, numbers)
        found = self.compiled.get(key)
        if found is None:
            with _lock:
                key = self._note_dynamic(tensors, numbers)
                found = self.compiled.get(key)
                if found is None:
                    found = self.compiled[key] = self._compile(key, tensors, numbers)
        fn, guard = found
        if guard is not None:
            tensors = (*tensors, *(numbers[i] for i in self.dynamic))
            if not guard(*tensors):
                return self._run_torch(args)
        if not torch.is_grad_enabled():  # inference (a decode step): no context to enter
            return fn(*tensors)
        with torch.no_grad():  # thunder's autograd runs around regions; Inductor builds no graph of its own
            return fn(*tensors)

    def _note_dynamic(self, tensors, numbers):
        """Marks the integers whose value differs from the first call's as inputs of the graph (symbolic regions
        only); returns the key of this call."""
        if self.first_numbers is None:
            self.first_numbers = numbers
        elif self.symbolic:
            varied = {i for i, (a, b) in enumerate(zip(numbers, self.first_numbers))
                      if type(a) is int and type(b) is int and a != b}
            self.dynamic = tuple(sorted(varied.union(self.dynamic)))
        return self.key(tensors, numbers)

    def _run_torch(self, args):
        _stats["guard_failures"] += 1
        if self.fallback is None:
            self.fallback = self.trace.python_callable()
        return self.fallback(*args)

    def _compile(self, key, tensors, numbers):
        from torch._inductor import config

        with config.patch(INDUCTOR_CONFIG):  # part of the saved region's key too
            return self._load_or_compile(key, tensors, numbers)

    def _load_or_compile(self, key, tensors, numbers):
        saved = disk_cache.path(self.trace, key)
        loaded = disk_cache.load(saved) if saved else None
        if loaded is not None:
            compiled, self.codes[key], guards = loaded
            _stats["loads"] += 1
        else:
            compiled, self.codes[key], guards = self._record_and_compile(tensors, numbers)
            _stats["compiles"] += 1
            if saved:
                disk_cache.save(saved, compiled, self.codes[key], guards)
        return compiled, _guard_function(guards, len(tensors) + len(self.dynamic)) if self.dynamic else None

    def _record_and_compile(self, tensors, numbers):
        """(the compiled graph, its FX code, its shape guards as a Python expression over ``t0, t1, ...`` or
        None); the integers at ``self.dynamic`` are inputs of the graph, after the tensors."""
        import torch
        from torch._inductor import standalone_compile
        from torch.fx.experimental.proxy_tensor import make_fx

        region, dynamic = self.trace.python_callable(), self.dynamic

        def graph_fn(*inputs):
            values = dict(zip(dynamic, inputs[len(tensors):]))
            return region(*inputs[:len(tensors)], *(values.get(i, n) for i, n in enumerate(numbers)))

        examples = [*(t.detach() for t in tensors), *(numbers[i] for i in dynamic)]
        with torch.no_grad():
            gm = make_fx(graph_fn, tracing_mode="symbolic" if self.symbolic else "fake")(*examples)
            compiled = standalone_compile(gm, examples,
                                          dynamic_shapes="from_graph" if self.symbolic else "from_example_inputs")
        return compiled, gm.code, _guards(gm) if dynamic else None


def _guards(gm) -> str | None:
    """What recording ``gm`` assumed about its inputs' sizes and integers, as a Python expression over the
    placeholders named ``t0, t1, ...`` (None: nothing)."""
    import re

    placeholders = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
    shape_env = next(p.fake_mode.shape_env for p in placeholders if hasattr(p, "fake_mode"))
    expression = shape_env.produce_guards_expression(placeholders)
    return None if expression is None else re.sub(r"L\['(t\d+)'\]", r"\1", expression)


def _guard_function(guards: str | None, n_inputs: int):
    """``guards`` as a function of the graph's ``n_inputs`` inputs (always true where there are none)."""
    from torch.fx.experimental.symbolic_shapes import SYMPY_INTERP  # the names (Max, Min, ...) guards use

    if guards is None:
        return lambda *inputs: True
    return eval(f"lambda {', '.join(f't{i}' for i in range(n_inputs))}: {guards}", dict(SYMPY_INTERP))
