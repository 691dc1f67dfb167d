"""The ``triton`` fusion executor: claims fusible prims during dispatch, then groups them into regions,
each run by one generated Triton kernel (``regions`` forms them, ``codegen`` writes the kernel)."""

from __future__ import annotations

from thunder.extend import ClaimingFusionExecutor
from thunder_triton import claims

__all__ = ["TritonExecutor"]


class TritonExecutor(ClaimingFusionExecutor):
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
    claimable_prim = staticmethod(claims.claimable_prim)

    def copy_ok(self, bsym) -> bool:
        out = bsym.kwargs["out"]
        if not (claims.device_ok(out) and claims.rules.fusible_dtype(out.dtype)):
            return False
        # an update of a tensor that autograd must see stays an eager copy (as in the torch executor's folding)
        return not (out.requires_grad and bsym.kwargs.get("grad_enabled", True))

    # fusion --------------------------------------------------------------------------------------
    def fusion_pass(self, trace):
        from thunder_triton.regions import fuse

        return fuse(self, trace)


def _triton_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("triton")
    except Exception:
        return None
