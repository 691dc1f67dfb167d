"""Region formation: groups the claimed prims of a dispatched trace into regions, one Inductor graph each.

Inductor fuses whatever it is given, so regions have no shape constraints: they are formed by
``thunder.extend.regions.form_regions`` (which says how regions stay acyclic and when ``copy_to_out_`` joins one).
Claims that end in no region worth compiling (only views, or only an ``iota`` or ``full``) are given back to the
torch executor. A KV-cache update on CPU (``cache[:b].index_copy_(dim, pos, k)``) joins the region computing
``k``: Inductor writes the new rows into the cache in place, fused with their producer, and the attention reading
the cache stays in the same region (litgpt's decode step is one region instead of one per layer and store).
"""

from __future__ import annotations

from functools import partial

from thunder.core.symbol import BoundSymbol
from thunder.extend import fuse_regions
from thunder.extend.regions import form_regions, in_place_stores, region_inputs
from thunder_inductor import claims

__all__ = ["fuse"]


def fuse(executor, trace):
    from thunder_inductor.compile import region_fusion

    trace, stores = in_place_stores(trace, claims.storable)
    regions = form_regions(list(trace.bound_symbols), trace.output, view_prims=claims.NOT_WORTH_ALONE, stores=stores)
    return fuse_regions(trace, regions, partial(_region_bsym, executor, region_fusion))


def _region_bsym(executor, region_fusion, r, prims_, outputs) -> BoundSymbol:
    tensor_inputs, number_inputs = region_inputs(prims_)
    symbol = region_fusion(executor, prims_, tensor_inputs, number_inputs, outputs)
    return BoundSymbol(symbol, (*tensor_inputs, *number_inputs), {}, tuple(outputs), tuple(prims_),
                       prims_[0].source)
