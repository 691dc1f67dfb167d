"""A region as a TorchInductor-compiled FX graph.

The region's prims are lowered with the torch executor (the very torch calls it would make) into a small trace;
on the first call with given input metadata, that trace is recorded as an FX graph by ``make_fx`` and compiled
by ``torch._inductor.standalone_compile`` (Inductor's FX-graph and kernel caches apply, so an identical region
compiles from disk). The compiled artifact is also saved under Inductor's cache directory, keyed by the region's
printed source and input key (``disk_cache``): a second process loads it without recording the graph again, which
is most of a warm first call. Where the trace's sizes are symbolic (``cache="symbolic values"``), the graph
is recorded with symbolic sizes, and the shape guards recording made (what Inductor's code assumes: sizes that were
equal stay equal, 0 and 1 stay themselves, a slice end within its tensor's size) are the test that a later call may
run it: a region keeps the graphs it compiled, and a call runs the first whose guards its inputs pass, or compiles
another. Numbers the region takes (scalars, sizes given to reshapes) are baked into the graph, until an integer is
seen with a second value (a decode step's position): from then on it is an input of the graph, symbolic like the
sizes (Dynamo's "automatic dynamic"), so a decode loop compiles each region twice, not once per position.
"""

from __future__ import annotations

import itertools
import re
import threading
import warnings
from itertools import chain
from operator import attrgetter, methodcaller

import torch

from thunder.core.proxies import NumberProxy
from thunder.core.symbol import Symbol
from thunder.core.trace import TraceCtx
from thunder_inductor import disk_cache
from thunder_inductor.fast_check import fast_check
from thunder_inductor.pch import combined_header

__all__ = ["region_fusion", "InductorFusion", "InductorCompileWarning", "stats"]

_counter = itertools.count()
_dtype_device = attrgetter("dtype", "device")
_stride, _offset = methodcaller("stride"), methodcaller("storage_offset")
_lock = threading.Lock()
_stats = {"compiles": 0, "loads": 0, "torch_calls": 0, "failed": 0}
# graphs a symbolic region compiles at most; a call no graph of a full region accepts runs the region's torch calls
MAX_GRAPHS = 8
# a region whose calls changed layout this often is not checked first against the layout of one of them
MAX_LAYOUT_CHANGES = 2


class InductorCompileWarning(UserWarning):
    """A region Inductor could not record or compile runs its torch calls instead (the same values, unfused)."""


def stats() -> dict:
    """{'compiles': graphs compiled by Inductor in this process, 'loads': compiled graphs loaded from disk,
    'torch_calls': calls of a region that had compiled ``MAX_GRAPHS`` graphs, none accepting them, or that Inductor
    could not compile, 'failed': compilations Inductor failed (:class:`InductorCompileWarning`)}."""
    return dict(_stats)


def region_fusion(executor, prims_, tensor_inputs, number_inputs, outputs) -> Symbol:
    """The symbol that runs one region: prints as ``inductor_fusion_N(...)`` with the region's prims as comments."""
    from thunder.extend.claiming import fallback_lower

    trace = TraceCtx("region")
    trace.args = [*tensor_inputs, *number_inputs]
    for p in trace.args:
        trace.names.add(p.name)
    for b in prims_:
        # an in-place store the region took is the torch executor's call already
        trace.bound_symbols.extend([b] if b.sym.executor is not None else fallback_lower(b, "thunder_inductor"))
    trace.output = tuple(outputs)
    symbolic = any(isinstance(d, NumberProxy) for t in tensor_inputs for d in t.shape)
    name = f"inductor_fusion_{next(_counter)}"
    stores = [b for b in prims_ if b.sym.executor is not None]
    writes_inputs = bool(stores) or any(b.sym.id == "prims.copy_to_out_" for b in prims_)
    fusion = InductorFusion(name, trace, len(tensor_inputs), symbolic, IndexCheck.of(stores, tensor_inputs),
                            writes_inputs)
    return Symbol(name, id=f"inductor.{name}", is_prim=True, executor=executor, call_ctx={name: fusion},
                  tags=("side_effect",) if writes_inputs else ())


# emulate_precision_casts: a low-precision (bfloat16, float16) intermediate is rounded to its dtype, as eager rounds
# each op's result, instead of staying float32 through the kernel (fuzz seed 7254: bfloat16 subnormals halved)
INDUCTOR_CONFIG = {"emulate_precision_casts": True}
# per device type of the region's tensors, on top of INDUCTOR_CONFIG. CPU: the C++ wrapper puts the graph's kernels
# and the code calling them in one C++ file, one compiler run where the Python wrapper compiles each kernel apart
# (the GPT's training step: 16 files, or 2; its cold first call 0.56x as long, docs/inductor.md)
DEVICE_CONFIG = {"cpu": {"cpp_wrapper": True}}


def _settings(tensors, symbolic: bool) -> list[dict]:
    """The Inductor configurations a region is compiled with, in turn until one compiles: its device's first, then
    INDUCTOR_CONFIG alone. Symbolic regions skip the C++ wrapper (a size given to a fallback op fails in it:
    ``aten::expand() Expected a value of type 'List[int]'``)."""
    devices = {t.device.type for t in tensors}
    extra = DEVICE_CONFIG.get(devices.pop()) if len(devices) == 1 and not symbolic else None
    return [{**INDUCTOR_CONFIG, **extra}, INDUCTOR_CONFIG] if extra else [INDUCTOR_CONFIG]


def _size_pattern(values):
    """Sizes, strides and offsets up to renaming, keeping 0 and 1: what a graph with symbolic sizes assumes (the
    name under which it is saved on disk)."""
    names = {v: i for i, v in enumerate((v for v in dict.fromkeys(values) if v != 0 and v != 1), 2)}
    names[0], names[1] = 0, 1
    return tuple(map(names.__getitem__, values))


def _layout(tensors) -> tuple:
    """The sizes, then the strides, then the storage offsets of ``tensors``, flat."""
    return (*chain.from_iterable(t.shape for t in tensors), *chain.from_iterable(map(_stride, tensors)),
            *map(_offset, tensors))


class IndexCheck:
    """Whether every index of the region's in-place ``index_copy_`` stores is in range: Inductor's kernel checks them
    in its loop with an error of its own and wraps negative ones, where eager raises ``IndexError`` (with the
    stores before the failing one made), so a call with an index out of range runs the region's torch calls."""

    def __init__(self, bounds: dict):
        # position of an index tensor among the region's tensors -> (position of a view it indexes, dim), ...
        self.bounds = bounds

    @classmethod
    def of(cls, stores, tensor_inputs) -> IndexCheck | None:
        position = {t.name: i for i, t in enumerate(tensor_inputs)}
        bounds: dict = {}
        for b in stores:
            view, dim, index = b.args[0], b.args[1], b.args[2]
            pair = (position[view.name], dim % max(len(view.shape), 1))
            if pair not in bounds.setdefault(position[index.name], []):
                bounds[position[index.name]].append(pair)
        return cls(bounds) if bounds else None

    def __call__(self, tensors) -> bool:
        for i, views in self.bounds.items():
            index = tensors[i]
            n = index.numel()
            if n == 0:
                continue
            if n == 1:
                low = high = index.item()
            else:
                low, high = (x.item() for x in torch.aminmax(index))
            if low < 0 or any(high >= tensors[v].shape[d] for v, d in views):
                return False
        return True


class InductorFusion:
    """Runs a region: compiles it for each new input key (and, symbolic, for inputs no graph's guards accept), then
    calls the compiled graph."""

    def __init__(self, name: str, trace: TraceCtx, n_tensors: int, symbolic: bool,
                 index_check: IndexCheck | None = None, writes_inputs: bool = False):
        self.name, self.trace, self.n_tensors, self.symbolic = name, trace, n_tensors, symbolic
        self.index_check, self.writes_inputs = index_check, writes_inputs
        # input key -> the compiled graph (static sizes), or a list of (compiled graph, its guards) (symbolic)
        self.compiled: dict = {}
        self.codes: dict = {}  # disk key -> the code of the FX graph compiled for it
        # positions (among the numbers) of the integers seen with a second value: inputs of the graph
        self.dynamic: tuple[int, ...] = ()
        self.first_numbers: tuple | None = None
        self.torch_calls = None  # the region's torch calls, for a call no graph accepts once MAX_GRAPHS are compiled
        self.failed: set = set()  # keys Inductor could not record or compile for: those calls run the torch calls
        # id of a compiled graph -> the check that a call may run it (``fast_check``; None: no such check)
        self.checks: dict = {}
        # id of a compiled graph -> its guard expression (symbolic regions) and the positions of the numbers it takes
        # (``dynamic`` when it was compiled: a later call may have made more numbers inputs of later graphs)
        self.guards: dict = {}
        # (the check, the graph, the check specialized to the layout of a call it accepted or None) of the graph the
        # last call ran: tried first
        self.last = None
        self.layout_changes: dict = {}  # id of a compiled graph -> calls its layout-specialized check rejected

    def graph_codes(self) -> list[str]:
        return list(self.codes.values())

    def key(self, tensors, numbers):
        """Dtypes and devices, and the numbers baked into the graph; static sizes: the layout too."""
        dtypes_ = tuple(map(_dtype_device, tensors))
        if not self.symbolic:
            return dtypes_, _layout(tensors), numbers
        static = tuple(n for i, n in enumerate(numbers) if i not in self.dynamic) if self.dynamic else numbers
        return dtypes_, static, self.dynamic

    def __call__(self, *args):
        if self.index_check is not None and not self.index_check(args):
            return self._run_torch(args, count=False)
        last = self.last
        if last is not None:
            check, graph, exact = last
            if exact is not None:
                inputs = exact(*args)
                if inputs is not None:
                    return self._run(graph, inputs)
                self.layout_changes[id(graph)] = self.layout_changes.get(id(graph), 0) + 1
                self.last = (check, graph, None)
            inputs = check(*args)
            if inputs is not None:
                if exact is None and self.symbolic:
                    self._specialize(check, graph, args)
                return self._run(graph, inputs)
        tensors, numbers = args[:self.n_tensors], args[self.n_tensors:]
        found = self._lookup(self.key(tensors, numbers), tensors, numbers)
        if found is None:
            with _lock:
                key = self._note_dynamic(tensors, numbers)
                found = self._lookup(key, tensors, numbers) or self._compile(key, tensors, numbers)
        if found is False:
            return self._run_torch(args)
        graph, inputs = found
        check = self.checks.get(id(graph))
        self.last = (check, graph, None) if check is not None else None
        return self._run(graph, inputs)

    def _specialize(self, check, graph, args):
        """Tries ``graph`` first with a check specialized to the layout of ``args`` (a call its guards accepted;
        ``fast_check``), unless calls to the region keep changing their layout (a cache that grows each step)."""
        if self.layout_changes.get(id(graph), 0) >= MAX_LAYOUT_CHANGES:
            return
        guards, dynamic = self.guards[id(graph)]
        exact = fast_check(guards, args[:self.n_tensors], args[self.n_tensors:], dynamic, self.symbolic,
                           exact_layout=True)
        self.last = (check, graph, exact)

    @staticmethod
    def _run(graph, inputs):
        if not torch.is_grad_enabled():  # inference (a decode step): no context to enter
            return graph(*inputs)
        with torch.no_grad():  # thunder's autograd runs around regions; Inductor builds no graph of its own
            return graph(*inputs)

    def _lookup(self, key, tensors, numbers):
        """(the graph, its inputs) for this call, or None where none is compiled for it."""
        found = self.compiled.get(key)
        if not self.symbolic:
            return None if found is None else (found, tensors)
        inputs = (*tensors, *map(numbers.__getitem__, self.dynamic)) if self.dynamic else tensors
        for graph, guards in found or ():
            if guards(*inputs):
                return graph, inputs
        return None

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

    def _run_torch(self, args, count=True):
        _stats["torch_calls"] += count
        if self.torch_calls is None:
            self.torch_calls = self.trace.python_callable()
        return self.torch_calls(*args)

    def _compile(self, key, tensors, numbers):
        """(the graph, its inputs) compiled or loaded for this call and kept; False where the region has compiled
        ``MAX_GRAPHS`` graphs already."""
        from torch._inductor import config

        if key in self.failed:
            return False
        if self.writes_inputs and _share_memory(tensors):
            # AOTAutograd merges inputs that share memory and are written into one "synthetic base", a graph that
            # fails when called (fuzz seeds 7768, 7802); the torch calls write and read through the views in
            # program order, as eager. Which inputs share memory is the trace's (a view of an input is made in
            # the computation; the prologue keeps aliased inputs aliased), so it is asked once per key, here
            self.failed.add(key)
            return False
        graphs = self.compiled.setdefault(key, []) if self.symbolic else None
        if graphs is not None and len(graphs) >= MAX_GRAPHS:
            return False
        dynamic = [numbers[i] for i in self.dynamic]
        disk_key = (key, _size_pattern(_layout(tensors) + tuple(dynamic))) if self.symbolic else key
        for settings in _settings(tensors, self.symbolic):
            with config.patch(settings):  # part of the saved region's key too
                try:
                    graph, guards = self._load_or_compile(disk_key, tensors, numbers)
                    break
                except Exception as failure:  # noqa: BLE001 - any failure of make_fx/Inductor: the next settings
                    error = failure
        else:
            # the region's torch calls are what thunder's torch executor would run: the same values, unfused
            # (Inductor's internal errors recording symbolic regions, fuzz seeds 7711, 7739, 7756, 7762, 7767)
            self.failed.add(key)
            _stats["failed"] += 1
            warnings.warn(f"thunder-inductor: Inductor could not compile region {self.name} "
                          f"({type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}); "
                          "it runs its torch calls", InductorCompileWarning, stacklevel=2)
            return False
        self.checks[id(graph)] = fast_check(guards, tensors, numbers, self.dynamic, self.symbolic)
        self.guards[id(graph)] = guards, self.dynamic
        if graphs is None:
            self.compiled[key] = graph
            return graph, tensors
        graphs.append((graph, _guard_function(guards, len(tensors) + len(dynamic))))
        return graph, (*tensors, *dynamic)

    def _load_or_compile(self, key, tensors, numbers):
        saved = disk_cache.path(self.trace, key)
        loaded = disk_cache.load(saved) if saved else None
        # the disk key names sizes and strides only up to renaming: a graph saved for a contiguous cache has the key
        # of one for a view of a longer cache (strides other than its sizes imply), which its guards reject
        if loaded is not None and self._guards_accept(loaded[2], tensors, numbers):
            compiled, self.codes[key], guards = loaded
            _stats["loads"] += 1
            return compiled, guards
        compiled, self.codes[key], guards = self._record_and_compile(tensors, numbers)
        _stats["compiles"] += 1
        if saved:
            disk_cache.save(saved, compiled, self.codes[key], guards)
        return compiled, guards

    def _guards_accept(self, guards, tensors, numbers) -> bool:
        dynamic = [numbers[i] for i in self.dynamic]
        return _guard_function(guards, len(tensors) + len(dynamic))(*tensors, *dynamic)

    def _record_and_compile(self, tensors, numbers):
        """(the compiled graph, its FX code, its shape guards as a Python expression over ``t0, t1, ...`` or
        None); the integers at ``self.dynamic`` are inputs of the graph, after the tensors."""
        from torch._inductor import standalone_compile
        from torch.fx.experimental.proxy_tensor import make_fx

        region, dynamic = self.trace.python_callable(), self.dynamic

        def graph_fn(*inputs):
            values = dict(zip(dynamic, inputs[len(tensors):]))
            return region(*inputs[:len(tensors)], *(values.get(i, n) for i, n in enumerate(numbers)))

        examples = [*(t.detach() for t in tensors), *(numbers[i] for i in dynamic)]
        with torch.no_grad(), combined_header():
            gm = make_fx(graph_fn, tracing_mode="symbolic" if self.symbolic else "fake")(*examples)
            compiled = standalone_compile(gm, examples,
                                          dynamic_shapes="from_graph" if self.symbolic else "from_example_inputs")
        return compiled, gm.code, _guards(gm) if self.symbolic else None


def _share_memory(tensors) -> bool:
    storages = [t.untyped_storage().data_ptr() for t in tensors if t.numel()]
    return len(set(storages)) < len(storages)


def _guards(gm) -> str | None:
    """What recording and compiling ``gm`` assumed about its inputs' sizes, strides and integers (static ones
    included), as a Python expression over the placeholders named ``t0, t1, ...`` (None: nothing)."""
    from torch._dynamo.source import LocalSource

    placeholders = [n.meta["val"] for n in gm.graph.nodes if n.op == "placeholder"]
    shape_env = next(p.fake_mode.shape_env for p in placeholders if hasattr(p, "fake_mode"))
    guards = shape_env.produce_guards(placeholders, [LocalSource(f"t{i}") for i in range(len(placeholders))],
                                      ignore_static=False)
    ranks = {f"t{i}": p.dim() for i, p in enumerate(placeholders) if hasattr(p, "dim")}
    return " and ".join(_whole_tuples(guards, ranks)) or None


_ONE_DIM = re.compile(r"L\['(t\d+)'\]\.(size|stride)\(\)\[(\d+)\] == (.+)")


def _whole_tuples(guards: list[str], ranks: dict) -> list[str]:
    """The guards with their sources as plain names, where every dim of a tensor's sizes (or strides) is checked
    one by one (``t3.size()[0] == 128 and t3.size()[1] == s``) as one comparison of the tuple
    (``t3.size() == (128, s)``): most of a layer's guards are its weights' static sizes, and one tuple compare
    costs about what one dim's does."""
    by_dim: dict = {}
    for i, g in enumerate(guards):
        m = _ONE_DIM.fullmatch(g)
        if m:
            by_dim.setdefault(m.group(1, 2), {})[int(m.group(3))] = (i, m.group(4))
    merged, out = set(), []
    for (name, kind), dims in by_dim.items():
        if sorted(dims) == list(range(ranks[name])):  # every dim, each checked once
            merged.update(i for i, _ in dims.values())
            values = "".join(f"{dims[d][1]}, " for d in range(ranks[name]))
            out.append(f"{name}.{kind}() == ({values})")
    out += [g for i, g in enumerate(guards) if i not in merged]
    return [re.sub(r"L\['(t\d+)'\]", r"\1", g) for g in out]


def _guard_function(guards: str | None, n_inputs: int):
    """``guards`` as a function of the graph's ``n_inputs`` inputs (always true where there are none)."""
    from torch.fx.experimental.symbolic_shapes import SYMPY_INTERP  # the names (Max, Min, ...) guards use

    if guards is None:
        return lambda *inputs: True
    return eval(f"lambda {', '.join(f't{i}' for i in range(n_inputs))}: {guards}", dict(SYMPY_INTERP))
