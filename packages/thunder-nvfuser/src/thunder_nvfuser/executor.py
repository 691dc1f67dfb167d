"""The ``nvfuser`` fusion executor: claims the prims nvFuser supports during dispatch (``claims``), groups them into
regions and runs each region as an nvFuser fusion (``fusion``)."""

from __future__ import annotations

from thunder.extend import ClaimingFusionExecutor
from thunder_nvfuser import availability, claims, translate

__all__ = ["NvFuserExecutor"]


class NvFuserExecutor(ClaimingFusionExecutor):
    def __init__(self):
        # above triton (50): where both run, nvFuser's schedulers take what they claim
        super().__init__("nvfuser", priority=60, version=_nvfuser_version())

    def availability(self) -> tuple[bool, str]:
        return availability.availability()

    # claiming ------------------------------------------------------------------------------------
    # Fusions are invisible to PyTorch's autograd, which is fine: a trace that needs gradients is split by thunder's
    # autograd into forward and backward traces, both dispatched (and fused) here.
    claimable_prim = staticmethod(claims.claimable_prim)
    why_not_prim = staticmethod(claims.why_not)  # thunder.examine.claims(jfn, "nvfuser") reports it

    def copy_ok(self, bsym) -> bool:
        out = bsym.kwargs["out"]
        if out.device.type != "cuda" or out.dtype not in translate.DTYPES:
            return False
        # an update of a tensor that autograd must see stays an eager copy (as in the torch executor's folding)
        return not (out.requires_grad and bsym.kwargs.get("grad_enabled", True))

    # fusion --------------------------------------------------------------------------------------
    def fusion_pass(self, trace):
        from thunder_nvfuser.fusion import fuse

        return fuse(self, trace)


def _nvfuser_version() -> str | None:
    build = availability.installed_builds()
    if not build:
        return None
    from importlib.metadata import version

    return f"{build[0]} {version(build[0])}"
