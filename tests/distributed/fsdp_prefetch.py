"""What each rank runs for FSDP2's parameter all-gathers in the compiled units' forward traces: with one unit per
block (thunder.distributed.fsdp, bucketing_strategy="BLOCK", which sets FSDP2's forward prefetch), block 0's trace
all-gathers its own parameters and issues block 1's all-gather before it computes; block 1's trace only waits for
it. FSDP2 all-gathers only the root's parameters (the head), which runs eagerly."""

from __future__ import annotations

import torch

import thunder

from .training import net

_COLLECTIVE = "torch.ops._c10d_functional."


def _calls(trace) -> list[str]:
    """The trace's calls in order: a collective by its op name, a linear as "linear"."""
    names = []
    for bsym in trace.bound_symbols:
        line = str(bsym)
        if _COLLECTIVE in line:
            names.append(line.split(_COLLECTIVE)[1].split("(")[0])
        elif "functional.linear" in line:
            names.append("linear")
    return names


def forward_prefetch(rank, world_size):
    model, loss_fn = net()
    jitted = thunder.jit(thunder.distributed.fsdp(model, sharding_strategy="ZERO3", bucketing_strategy="BLOCK"))
    for _ in range(2):  # traced, then cached
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            loss_fn(jitted, torch.randn(4, 8)).backward()
    fsdp_gathers = [e.name for e in prof.events() if e.name.split(" ")[0] == "FSDP::all_gather"]
    assert fsdp_gathers and not any("blocks" in name for name in fsdp_gathers), fsdp_gathers  # the root's only
    block0, block1 = (thunder.last_traces(f)[-1] for f in jitted._run.functions)
    # block 0: its all-gather, waited for; block 1's issued; then its two linears
    assert _calls(block0) == ["all_gather_into_tensor", "wait_tensor", "all_gather_into_tensor", "linear",
                              "linear"], block0
    assert _calls(block1) == ["wait_tensor", "linear", "linear"], block1  # waits for what block 0 issued
    assert [a.name for a in block1.args][-2] == "pending", block1
