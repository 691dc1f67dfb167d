"""The ``triton`` fusion executor: claims fusible prims during dispatch, then groups them into regions,
each run by one generated Triton kernel (``regions`` forms them, ``codegen`` writes the kernel)."""

from __future__ import annotations

from thunder.extend import FusionExecutor
from thunder_triton import claims

__all__ = ["TritonExecutor", "COPY_TO_OUT"]

COPY_TO_OUT = "prims.copy_to_out_"


class TritonExecutor(FusionExecutor):
    def __init__(self):
        super().__init__("triton", priority=50, version=_triton_version())

    def availability(self) -> tuple[bool, str]:
        try:
            import triton  # noqa: F401
        except Exception as e:  # never raise: a missing runtime only makes the executor unavailable
            return False, f"triton is not installed ({type(e).__name__}: {e}); pip install triton"
        if claims.interpreting():
            return True, ""
        try:
            import torch

            if not torch.cuda.is_available():
                return False, ("no CUDA device: Triton kernels need a GPU (TRITON_INTERPRET=1 runs them on CPU "
                               "tensors with Triton's interpreter, slowly)")
        except Exception as e:
            return False, f"cannot query CUDA: {type(e).__name__}: {e}"
        return True, ""

    # claiming ------------------------------------------------------------------------------------
    # Kernels are invisible to PyTorch's autograd, which is fine: a trace that needs gradients is split by
    # thunder's autograd into forward and backward traces (run inside one torch.autograd.Function), and
    # both are dispatched here like any other trace.
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
            else:  # size arithmetic: runs in Python before the kernel
                lowered.extend(_fallback_lower(leaf.replace(source=leaf.source or bsym.source)))
        return lowered

    # fusion --------------------------------------------------------------------------------------
    def fusion_pass(self, trace):
        from thunder_triton.regions import fuse

        return fuse(self, trace)


def _copy_ok(bsym) -> bool:
    out = bsym.kwargs["out"]
    if not (claims.device_ok(out) and claims.rules.fusible_dtype(out.dtype)):
        return False
    # an update of a tensor that autograd must see stays an eager copy (as in the torch executor's folding)
    return not (out.requires_grad and bsym.kwargs.get("grad_enabled", True))


def _fallback_lower(bsym) -> list:
    """Lowers ``bsym`` with the python executor, else the torch executor (what dispatch would have chosen)."""
    from thunder.extend import get_executor, lower_keeping_tags

    for name in ("python", "torch"):
        ex = get_executor(name)
        if ex is not None and ex.can_execute(bsym):
            return lower_keeping_tags(ex, bsym)
    raise RuntimeError(f"thunder_triton: no executor can run {bsym.sym.id}")


def _triton_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:
        return None
