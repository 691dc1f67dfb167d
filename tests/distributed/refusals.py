"""What each rank runs for the refusals: engine work reached while tracing is refused with a clear message."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist

import thunder
from thunder.core.errors import UnsupportedError

from .training import net


def refusals(rank, world_size):
    x = torch.randn(4, 8)

    # DDP's forward traced as part of a function: its reducer would be prepared only while tracing
    ddp = thunder.distributed.ddp(net()[0])
    with pytest.raises(UnsupportedError, match=r"Logger\.set_runtime_stats_and_log\(\) communicates .* not on every "
                                               r"call .*distributed\.py.*thunder\.jit\(model\)"):
        thunder.jit(lambda x: ddp(x).sum())(x)

    # DDP made with the Python reducer: the boundary drives the C++ reducer's switches
    with torch._dynamo.config.patch(optimize_ddp="python_reducer"):
        python_reducer = thunder.distributed.ddp(net()[0])
    with pytest.raises(NotImplementedError, match=r"DistributedDataParallel with the Python reducer .*optimize_ddp"):
        thunder.jit(python_reducer)

    # a pending collective (its Work handle) and a barrier: effects the trace cannot hold
    def pending(t):
        t = t * 2
        work = dist.all_reduce(t, async_op=True)
        work.wait()
        return t

    with pytest.raises(UnsupportedError, match=r"all_reduce\(async_op=True\) is not supported .*async_op=False"):
        thunder.jit(pending)(x)
    with pytest.raises(UnsupportedError, match=r"ProcessGroup\.barrier\(\) communicates"):
        thunder.jit(lambda t: (dist.barrier(), t + 1)[1])(x)

    # queries of the process group are plain values
    assert torch.equal(thunder.jit(lambda t: t * dist.get_rank() + dist.get_world_size())(x),
                       x * rank + world_size)

    # FSDP2's sharded parameters outside its forward: computing on them would be computing on shards
    sharded = thunder.distributed.fsdp(net()[0])
    with pytest.raises(UnsupportedError, match=r"a DTensor .*Shard\(dim=0\).* silently compute unsharded"):
        thunder.jit(lambda t: t @ sharded.head.weight.t())(x)

    # an FSDP model called by a jitted function: its hooks would gather parameters only while tracing
    with pytest.raises(UnsupportedError, match=r"FSDPNet is a fully_shard-ed module: .*thunder\.jit\(model\)"):
        thunder.jit(lambda t: sharded(t).sum())(x)
