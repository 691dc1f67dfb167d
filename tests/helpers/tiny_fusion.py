"""A small real fusion executor for tests that need fusion regions in a trace without Triton, nvFuser or a C++
compiler: it claims elementwise prims on tensors and runs each run of consecutive claims as one Python function
(the region's prims executed by the torch executor). It fuses nothing at the kernel level; what it gives tests is
the structure thunder's tools inspect (fusion bound symbols with their prims as subsymbols)."""

from __future__ import annotations

from thunder.core.proxies import TensorProxy
from thunder.core.symbol import BoundSymbol, Symbol
from thunder.core.trace import TraceCtx
from thunder.extend import get_executor, register_executor
from thunder.extend.claiming import ClaimingFusionExecutor, claimed_prim, fuse_regions

__all__ = ["tiny_fuser"]


class _Region:
    def __init__(self):
        self.members: list[int] = []


class TinyFuser(ClaimingFusionExecutor):
    def claimable_prim(self, bsym) -> bool:
        return "elementwise" in bsym.sym.tags and all(isinstance(p, TensorProxy) for p in bsym.flat_proxy_args)

    def fusion_pass(self, trace):
        regions, current = [], None
        for i, b in enumerate(trace.bound_symbols):
            if claimed_prim(b) is None:
                current = None
                continue
            if current is None:
                current = _Region()
                regions.append(current)
            current.members.append(i)
        self._count = getattr(self, "_count", 0)
        return fuse_regions(trace, regions, self._region_bsym)

    def _region_bsym(self, region, prims, outputs) -> BoundSymbol:
        from thunder.transforms.dispatch import dispatch_to_executors

        inside, inputs = set(), []
        for b in prims:
            for p in b.flat_proxy_args:
                if p.name not in inside and all(p.name != q.name for q in inputs):
                    inputs.append(p)
            inside.update(o.name for o in b.flat_proxy_outs)
        body = TraceCtx("region")
        body.args, body.bound_symbols, body.output = list(inputs), list(prims), tuple(outputs)
        run = dispatch_to_executors(body, [get_executor("torch")]).python_callable()
        name = f"tiny_fusion_{self._count}"
        self._count += 1
        symbol = Symbol(name, id=f"tiny.{name}", is_prim=True, executor=self, call_ctx={name: run})
        return BoundSymbol(symbol, tuple(inputs), {}, tuple(outputs), tuple(prims), prims[0].source)


def tiny_fuser() -> TinyFuser:
    """The executor (registered once, opt-in: pass it in ``executors=``)."""
    return get_executor("tiny_fuser") or register_executor(TinyFuser("tiny_fuser", priority=50, default=False))
