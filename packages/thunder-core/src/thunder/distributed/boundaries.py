"""``thunder.jit`` of a model trained on PyTorch's distributed engine: the engine runs natively on every call,
thunder compiles the math inside it.

DDP and FSDP2 do Python work on every forward that must not be traced once and replayed (seed 002, see
:mod:`thunder.distributed.outside_effects`): DDP prepares its reducer for the forward and the backward and
rebuilds its gradient buckets; FSDP2's hooks all-gather a unit's parameters before its forward, reshard them
after it, and register the hooks that all-gather again before its backward and reduce-scatter the gradients
after it. So the jit draws its boundary where the engine hands over to the model's own code:

- ``DistributedDataParallel(m)``: DDP's forward runs natively and calls the jitted ``m``. The parameters are
  leaves of thunder's autograd node, so DDP's reducer hooks on their gradient accumulators fire as in eager and
  all-reduce the gradients bucket by bucket, overlapping the rest of the backward.
- a model with ``fully_shard`` units: each unit that contains no other unit (a transformer block, or the whole
  model when only the root is sharded) runs its forward jitted, between FSDP's own hooks; what a unit with
  sub-units computes around them (the root's embedding and head) runs eagerly. The jitted forward reads the
  unsharded parameters FSDP's pre-forward hook installed, so nothing is computed on shards.

A boundary swaps the compiled forwards in only for the duration of a call of the jitted module, so the model
itself, called directly, stays eager.
"""

from __future__ import annotations

import sys
import types

__all__ = ["engine_boundary", "DDPBoundary", "FSDPBoundary"]


def engine_boundary(model, jit_options: dict):
    """The boundary for ``model`` if the distributed engine drives it, else None."""
    if "torch.distributed" not in sys.modules:  # no engine exists before torch.distributed is imported
        return None
    from torch.distributed.fsdp import FSDPModule
    from torch.nn.parallel import DistributedDataParallel

    if isinstance(model, DistributedDataParallel):
        return DDPBoundary(model, jit_options)
    if any(isinstance(m, FSDPModule) for m in model.modules()):
        return FSDPBoundary(model, jit_options)
    return None


class DDPBoundary:
    """DDP's forward natively around the jitted wrapped module."""

    def __init__(self, ddp, jit_options: dict):
        from thunder.frontend.module import ThunderModule

        if getattr(ddp, "_use_python_reducer", False):
            raise NotImplementedError("thunder.jit of DistributedDataParallel with the Python reducer "
                                      "(TORCH_DDP_USE_PYTHON_REDUCER) is not supported; use the default C++ reducer")
        self.ddp = ddp
        self.inner = ThunderModule(ddp.module, **jit_options)
        self.functions = [self.inner._tfn]

    def __call__(self, *args, **kwargs):
        # DDP's forward calls ``self.module``: an instance attribute wins over ``_modules['module']`` (which
        # state_dict and parameters() keep using) for this call only
        state = self.ddp.__dict__
        state["module"] = self.inner
        try:
            return self.ddp(*args, **kwargs)
        finally:
            del state["module"]


class FSDPBoundary:
    """The model called natively (FSDP's hooks run), each innermost FSDP unit's forward jitted."""

    def __init__(self, model, jit_options: dict):
        from torch.distributed.fsdp import FSDPModule

        from thunder.frontend.jit import ThunderFunction

        units = [m for m in model.modules() if isinstance(m, FSDPModule)]
        innermost = [u for u in units if not any(isinstance(d, FSDPModule) for d in u.modules() if d is not u)]
        self.model = model
        self.compiled = [(u, ThunderFunction(types.MethodType(type(u).forward, u), **jit_options)) for u in innermost]
        self.functions = [f for _, f in self.compiled]

    def __call__(self, *args, **kwargs):
        # nn.Module.__call__ runs ``self.forward``, which an instance attribute overrides
        for unit, compiled in self.compiled:
            unit.__dict__["forward"] = compiled
        try:
            return self.model(*args, **kwargs)
        finally:
            for unit, _ in self.compiled:
                unit.__dict__.pop("forward", None)
