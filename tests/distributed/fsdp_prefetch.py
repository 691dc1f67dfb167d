"""What each rank runs for FSDP2's forward prefetch under thunder.jit: thunder.distributed.fsdp with one unit per
block issues each block's all-gather while the block before it (compiled by thunder) runs."""

from __future__ import annotations

import torch

import thunder

from .training import net


def forward_prefetch(rank, world_size):
    model, loss_fn = net()
    jitted = thunder.jit(thunder.distributed.fsdp(model, sharding_strategy="ZERO3", bucketing_strategy="BLOCK"))
    for _ in range(2):  # traced, then cached
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            loss_fn(jitted, torch.randn(4, 8)).backward()
    events = [e.name for e in sorted(prof.events(), key=lambda e: e.time_range.start)]
    prefetch = events.index("FSDP::forward_prefetch for blocks.1")
    # issued before block 0's compiled forward computes, which ends before block 1's forward starts
    assert prefetch < events.index("aten::linear") < events.index("FSDP::pre_forward (blocks.1)"), events
