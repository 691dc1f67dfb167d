"""The ``inductor`` fusion executor: claims fusible prims during dispatch, groups them into regions
(``regions``), and runs each region as one TorchInductor-compiled FX graph (``compile``)."""

from __future__ import annotations

from thunder.extend import ClaimingFusionExecutor, get_executor
from thunder.extend.claiming import claim_symbol
from thunder_inductor import claims

__all__ = ["InductorExecutor"]


class InductorExecutor(ClaimingFusionExecutor):
    def __init__(self):
        super().__init__("inductor", priority=40, version=_torch_version(), default=False)  # docs/inductor.md

    def availability(self) -> tuple[bool, str]:
        try:
            from torch._inductor import cpp_builder

            compiler = cpp_builder.get_cpp_compiler()
        except Exception as e:  # never raise: a missing compiler only makes the executor unavailable
            return False, (f"TorchInductor cannot find a C++ compiler for CPU kernels ({type(e).__name__}: {e}); "
                           "install g++ or clang, or set CXX")
        return (True, "") if compiler else (False, "TorchInductor found no C++ compiler; install g++ or set CXX")

    # claiming ------------------------------------------------------------------------------------
    # Compiled graphs are invisible to PyTorch's autograd, which is fine: a trace that needs gradients is split
    # by thunder's autograd into forward and backward traces, both dispatched (and fused) here.
    claimable_prim = staticmethod(claims.claimable_prim)

    # attention (claims.WHOLE) is claimed as one call with the torch executor's gradient rule: its backward is the
    # torch executor's ATen kernel, which is claimed in turn
    def can_execute(self, bsym) -> bool:
        if bsym.sym.id in claims.WHOLE:
            return claims.claimable_whole(bsym, get_executor("torch"))
        return super().can_execute(bsym)

    def grad_rule(self, bsym):
        return get_executor("torch").grad_rule(bsym) if bsym.sym.id in claims.WHOLE else super().grad_rule(bsym)

    def why_not(self, bsym) -> str | None:
        if bsym.sym.id in claims.WHOLE:
            return None if self.can_execute(bsym) else (
                f"{self.name} runs {bsym.sym.id} only where the torch executor runs it as its kernel")
        return super().why_not(bsym)

    def lower(self, bsym):
        if bsym.sym.id in claims.WHOLE:
            return [bsym.replace(sym=claim_symbol(bsym.sym, self), subsymbols=())]
        return super().lower(bsym)

    def copy_ok(self, bsym) -> bool:
        out = bsym.kwargs["out"]
        if out.device.type not in ("cpu", "cuda"):
            return False
        # an update of a tensor that autograd must see stays an eager copy (as in the torch executor's folding)
        return not (out.requires_grad and bsym.kwargs.get("grad_enabled", True))

    # fusion --------------------------------------------------------------------------------------
    def fusion_pass(self, trace):
        from thunder_inductor.regions import fuse

        return fuse(self, trace)


def _torch_version() -> str | None:
    try:
        import torch

        return torch.__version__
    except Exception:
        return None
