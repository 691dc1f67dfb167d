"""Distributed training on PyTorch's engine (DDP, FSDP2), compiled by thunder. See docs/distributed.md.

``thunder.jit`` of a ``DistributedDataParallel`` model or of a model with ``fully_shard`` units compiles the
model's math and lets the engine do its per-call work and communication natively on every call
(:mod:`thunder.distributed.boundaries`). :func:`ddp` and :func:`fsdp` are lightning-thunder's names for preparing
a model, built on PyTorch's DDP and FSDP2::

    model = thunder.distributed.fsdp(model)   # or thunder.distributed.ddp(model)
    jmodel = thunder.jit(model)
"""

from __future__ import annotations

__all__ = ["ddp", "fsdp"]

# lightning-thunder's FSDP sharding strategies: ZERO2 keeps the gathered parameters from the forward for the
# backward, ZERO3 frees them after the forward and gathers them again
_RESHARD_AFTER_FORWARD = {"ZERO2": False, "ZERO3": True}
_BUCKETING = ("NONE", "BLOCK")
_DDP_DEFAULT_BUCKET_MB = 25.0


def _name(option) -> str:
    return getattr(option, "name", option)  # an enum member (lightning-thunder's FSDPType) or its name


def _broadcast(model, src) -> None:
    """Every rank starts from rank ``src``'s parameters and buffers."""
    if src is None:
        return
    import torch
    import torch.distributed as dist

    with torch.no_grad():
        for tensor in (*model.parameters(), *model.buffers()):
            dist.broadcast(tensor, src)


def ddp(model, *, broadcast_from: int | None = None, bucket_size_in_mb: float = 25.0, **ddp_options):
    """``DistributedDataParallel(model)`` with gradient buckets of ``bucket_size_in_mb``; DDP itself checks that
    the ranks start from equal parameters. ``broadcast_from``: copy that rank's parameters and buffers to every
    rank first. Other keyword arguments go to DDP. Jit the result with ``thunder.jit``."""
    from torch.nn.parallel import DistributedDataParallel

    _broadcast(model, broadcast_from)
    # 25 is DDP's own default, which also keeps DDP's small first bucket (1 MiB, reduced while the rest of the
    # backward runs); DDP drops it when any bucket_cap_mb is given
    cap = None if bucket_size_in_mb == _DDP_DEFAULT_BUCKET_MB else bucket_size_in_mb
    return DistributedDataParallel(model, bucket_cap_mb=cap, **ddp_options)


def fsdp(model, *, broadcast_from: int | None = None, sharding_strategy="ZERO2", bucketing_strategy="NONE",
         device=None, mp_policy=None):
    """Shards ``model``'s parameters over the default process group with FSDP2's ``fully_shard`` (dim-0 shards,
    DTensor parameters) and returns it. Jit the result with ``thunder.jit``.

    sharding_strategy: "ZERO2" (parameters gathered in the forward stay for the backward) or "ZERO3" (freed after
        the forward, gathered again for the backward; with "BLOCK", the root's are kept, as FSDP2 keeps them by
        default); lightning-thunder's ``FSDPType`` members are accepted.
    bucketing_strategy: "NONE" (one unit: all parameters gathered together) or "BLOCK" (each module held in an
        ``nn.ModuleList`` is its own unit, and each block's all-gather is issued while the block before it runs,
        FSDP2's explicit forward prefetch; the root holds the rest).
    device: move the model there first. mp_policy: FSDP2's ``MixedPrecisionPolicy``.
    """
    from torch import nn
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    strategy, bucketing = _name(sharding_strategy), _name(bucketing_strategy)
    if strategy not in _RESHARD_AFTER_FORWARD:
        raise ValueError(f"sharding_strategy must be one of {sorted(_RESHARD_AFTER_FORWARD)}, got {strategy!r}")
    if bucketing not in _BUCKETING:
        raise ValueError(f"bucketing_strategy must be one of {list(_BUCKETING)}, got {bucketing!r}")
    if device is not None:
        model = model.to(device)
    _broadcast(model, broadcast_from)
    options = {"reshard_after_forward": _RESHARD_AFTER_FORWARD[strategy],
               "mp_policy": mp_policy or MixedPrecisionPolicy()}
    if bucketing == "BLOCK":
        lists = [list(lst) for lst in model.modules() if isinstance(lst, nn.ModuleList)]
        for block in (m for blocks in lists for m in blocks):
            fully_shard(block, **options)
        if any(lists):  # the root around the blocks: FSDP2's own choice (reshard_after_forward=None), which
            # keeps the root's parameters gathered from the forward for the backward, which would gather them first
            options["reshard_after_forward"] = None
    fully_shard(model, **options)
    if bucketing == "BLOCK":
        for blocks in lists:
            for block, following in zip(blocks, blocks[1:]):
                block.set_modules_to_forward_prefetch([following])
    return model
