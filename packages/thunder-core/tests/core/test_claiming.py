"""The claiming mechanism fusion executors get from thunder.extend (thunder.extend.claiming)."""

import thunder.torch as ltorch
from thunder.core import dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, tracectx
from thunder.extend import ClaimingFusionExecutor, fuse_regions
from thunder.extend.claiming import claimed_prim, prim_name


class _ClaimsAdd(ClaimingFusionExecutor):
    def claimable_prim(self, bsym):
        return prim_name(bsym) in ("add", "broadcast_in_dim")


def _trace(fn, *shapes):
    trace = TraceCtx()
    with tracectx(trace):
        trace.args = [TensorProxy(shape=s, dtype=dtypes.float32, device="cpu") for s in shapes]
        trace.output = fn(*trace.args)
    return trace


def test_composite_claimed_when_every_leaf_is_and_lowered_to_claim_symbols():
    ex = _ClaimsAdd("claims_add")
    (add,) = _trace(ltorch.add, (2, 3), (3,)).bound_symbols
    (sin,) = _trace(ltorch.sin, (2,)).bound_symbols
    assert ex.can_execute(add) and not ex.can_execute(sin)
    lowered = ex.lower(add)
    assert [b.sym.id for b in lowered] == ["claims_add_claim.prims.broadcast_in_dim", "claims_add_claim.prims.add"]
    assert [claimed_prim(b).id for b in lowered] == ["prims.broadcast_in_dim", "prims.add"]
    assert claimed_prim(add) is None


def test_claims_in_no_region_are_given_back_to_torch():
    ex = _ClaimsAdd("claims_add")
    trace = _trace(ltorch.add, (3,), (3,))
    trace.bound_symbols = [b for bsym in trace.bound_symbols for b in ex.lower(bsym)]
    fused = fuse_regions(trace, [], region_bsym=None)
    assert [b.sym.executor.name for b in fused.bound_symbols] == ["torch"]
