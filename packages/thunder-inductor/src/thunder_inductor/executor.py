"""The ``inductor`` fusion executor: claims fusible prims during dispatch, groups them into regions
(``regions``), and runs each region as one TorchInductor-compiled FX graph (``compile``)."""

from __future__ import annotations

from thunder.extend import FusionExecutor
from thunder_inductor import claims

__all__ = ["InductorExecutor", "COPY_TO_OUT"]

COPY_TO_OUT = "prims.copy_to_out_"


class InductorExecutor(FusionExecutor):
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
    def can_execute(self, bsym) -> bool:
        if bsym.sym.id == COPY_TO_OUT:
            return COPY_TO_OUT in self.implmap and _copy_ok(bsym)
        if bsym.sym.is_prim:
            return claims.claimable_prim(bsym)
        found = False
        for leaf in claims.leaves(bsym):
            if claims.claimable_prim(leaf):
                found = True
            elif not claims.is_number_prim(leaf):
                return False
        return found

    def lower(self, bsym):
        if bsym.sym.id == COPY_TO_OUT:
            return [bsym.replace(sym=claims.claim_symbol(bsym.sym, self), subsymbols=())]
        lowered = []
        for leaf in claims.leaves(bsym):
            if claims.claimable_prim(leaf):
                lowered.append(leaf.replace(sym=claims.claim_symbol(leaf.sym, self), subsymbols=(),
                                            source=leaf.source or bsym.source))
            else:  # size arithmetic: runs in Python before the region
                lowered.extend(fallback_lower(leaf.replace(source=leaf.source or bsym.source)))
        return lowered

    # fusion --------------------------------------------------------------------------------------
    def fusion_pass(self, trace):
        from thunder_inductor.regions import fuse

        return fuse(self, trace)


def _copy_ok(bsym) -> bool:
    out = bsym.kwargs["out"]
    if out.device.type not in ("cpu", "cuda"):
        return False
    # an update of a tensor that autograd must see stays an eager copy (as in the torch executor's folding)
    return not (out.requires_grad and bsym.kwargs.get("grad_enabled", True))


def fallback_lower(bsym) -> list:
    """Lowers ``bsym`` with the python executor, else the torch executor (what dispatch would have chosen)."""
    from thunder.extend import get_executor, lower_keeping_tags

    for name in ("python", "torch"):
        ex = get_executor(name)
        if ex is not None and ex.can_execute(bsym):
            return lower_keeping_tags(ex, bsym)
    raise RuntimeError(f"thunder_inductor: no executor can run {bsym.sym.id}")


def _torch_version() -> str | None:
    try:
        import torch

        return torch.__version__
    except Exception:
        return None
