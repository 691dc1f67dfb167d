"""Fusion regions: forming them in a dispatched trace, and running each as an nvFuser fusion.

Regions are formed by ``thunder.extend.regions.form_regions`` (nvFuser fuses any mix of shapes). Each becomes one
bound symbol ``nvfuser_fusion_N(tensors..., numbers...)`` whose subsymbols (printed as comments) are the region's
prims. At run time the region builds a ``FusionDefinition`` per input descriptor (dtypes, broadcast dims, contiguity,
stride order, number types; sizes are symbolic) on first sight and reuses it for every size after that.
"""

from __future__ import annotations

import itertools
import threading
from functools import partial

from thunder.core.symbol import BoundSymbol, Symbol
from thunder.extend import fuse_regions
from thunder.extend.regions import form_regions, region_inputs
from thunder_nvfuser import translate

__all__ = ["fuse", "NvFuserRegion", "VIEW_PRIMS", "stats"]

# regions of these alone are views in PyTorch: not worth a kernel
VIEW_PRIMS = frozenset({"broadcast_in_dim", "reshape", "transpose", "squeeze", "slice"})

_counter = itertools.count()
_MAX_LAYOUTS = 256  # per region
_lock = threading.Lock()
_stats = {"definitions": 0, "hits": 0}


def stats() -> dict:
    """{'definitions': FusionDefinitions built in this process, 'hits': region calls that reused one (the same
    layout, or a new size with the same descriptor)}."""
    return dict(_stats)


def fuse(executor, trace):
    regions = form_regions(list(trace.bound_symbols), trace.output, view_prims=VIEW_PRIMS)
    return fuse_regions(trace, regions, partial(_region_bsym, executor))


def _region_bsym(executor, r, prims_, outputs) -> BoundSymbol:
    tensor_inputs, number_inputs = region_inputs(prims_)
    name = f"nvfuser_fusion_{next(_counter)}"
    region = NvFuserRegion(name, tuple(prims_), tuple(tensor_inputs), tuple(number_inputs), tuple(outputs))
    writes_inputs = any(b.sym.name == "copy_to_out_" for b in prims_)
    symbol = Symbol(name, id=f"nvfuser.{name}", is_prim=True, executor=executor, call_ctx={name: region},
                    tags=("side_effect",) if writes_inputs else ())
    return BoundSymbol(symbol, (*tensor_inputs, *number_inputs), {}, tuple(outputs), tuple(prims_), prims_[0].source)


class NvFuserRegion:
    """Runs one region: ``region(*tensors, *numbers)`` returns its outputs (an output copied into an input is that
    input, updated in place)."""

    def __init__(self, name, prims_, tensor_inputs, number_inputs, outputs):
        self.name, self.prims = name, prims_
        self.tensor_inputs, self.number_inputs, self.outputs = tensor_inputs, number_inputs, outputs
        self.spec = translate.result_spec(prims_, tensor_inputs, outputs)
        # the device the trace computes on (a region of creation ops alone has no input to tell nvFuser)
        self.device = next(p.device.index for b in prims_ for p in b.flat_proxy_outs if hasattr(p, "device"))
        self.definitions: dict = {}  # key -> FusionDefinition
        # (dtype, shape, strides) of each tensor and number types -> its definition: the per-call lookup, which
        # computes no descriptor (bounded: sizes under symbolic values are unbounded)
        self._by_layout: dict = {}

    def __repr__(self) -> str:
        return f"<nvFuser region {self.name}>"

    def key(self, tensors, numbers) -> tuple:
        """The input descriptor a definition is built for (no sizes other than which dims are 1)."""
        from thunder.core.dtypes import to_dtype

        return (tuple(translate.describe(tuple(t.shape), t.stride(), to_dtype(t.dtype)) for t in tensors),
                tuple(type(n) for n in numbers))

    def program(self, descriptors) -> str:
        """The definition for ``descriptors`` as nvFuser's Python text (needs no nvFuser)."""
        b = translate.TextBuilder()
        translate.translate_region(b, self.prims, self.tensor_inputs, self.number_inputs, self.outputs, descriptors)
        return b.text(self.name)

    def contiguous_program(self) -> str:
        """The definition for contiguous inputs of the traced shapes (what ``fusion_definition`` shows before the
        region has run)."""
        descriptors = []
        for p in self.tensor_inputs:
            sizes = [s if isinstance(s, int) else 2 for s in p.shape]  # a symbolic size is not 1: any size > 1 will do
            strides, step = [0] * len(sizes), 1
            for d in reversed(range(len(sizes))):
                strides[d], step = step, step * max(sizes[d], 1)
            descriptors.append(translate.describe(sizes, strides, p.dtype))
        return self.program(descriptors)

    def _build(self, key):
        from thunder_nvfuser.availability import import_nvfuser

        nv = import_nvfuser()
        fd = nv.FusionDefinition()
        try:
            with fd:
                translate.translate_region(translate.NvFuserBuilder(nv, fd), self.prims, self.tensor_inputs,
                                           self.number_inputs, self.outputs, key[0])
        except Exception as e:
            raise self._failure("defining", key, e) from e
        _stats["definitions"] += 1
        return fd

    def _failure(self, what: str, key, e: Exception) -> RuntimeError:
        """The error of a region nvFuser could not define or run, with the program and the thunder prims."""
        prims_text = "\n".join(f"    {line}" for b in self.prims for line in str(b).splitlines())
        return RuntimeError(f"nvFuser failed {what} {self.name} ({type(e).__name__}: {e})\n"
                            f"its nvFuser program:\n{self.program(key[0])}its thunder prims:\n{prims_text}")

    def definition(self, tensors, numbers):
        """The FusionDefinition for these inputs: found by their layout, else by their descriptor, else built."""
        layout = (*((t.dtype, t.shape, t.stride()) for t in tensors), *map(type, numbers))
        fd = self._by_layout.get(layout)
        if fd is not None:
            _stats["hits"] += 1
            return fd
        key = self.key(tensors, numbers)
        with _lock:
            fd = self.definitions.get(key)
            if fd is None:
                fd = self.definitions[key] = self._build(key)
            else:
                _stats["hits"] += 1
            if len(self._by_layout) >= _MAX_LAYOUTS:
                self._by_layout.clear()
            self._by_layout[layout] = fd
        return fd

    def __call__(self, *args):
        n = len(self.tensor_inputs)
        tensors, numbers = args[:n], args[n:]
        fd = self.definition(tensors, numbers)
        try:
            results = fd.execute([*tensors, *numbers], device=self.device)
        except Exception as e:
            raise self._failure("running", self.key(tensors, numbers), e) from e
        return tuple(results[i] if kind == "new" else tensors[i] for kind, i in self.spec.results)
