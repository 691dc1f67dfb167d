"""What each rank runs for DDP's gradient reduction in the backward trace: bucketed all-reduces issued while the
backward still computes, DDP's reducer idle, the gradients DDP's own would be; DDP's reducer where the trace
cannot do what it does (a communication hook); unused parameters refused."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import thunder
from thunder.core.errors import UnsupportedError

from .training import net

SMALL_BUCKETS_MB = 0.0005  # about 500 bytes: the small net's 10 gradients fall into several buckets
_COLLECTIVE = "torch.ops._c10d_functional."


def _lines(trace) -> list[str]:
    return [line.strip() for line in str(trace).splitlines() if " = " in line and not line.strip().startswith("#")]


def _collectives_and_reducer(step) -> tuple[int, bool]:
    """(all-reduces started, whether DDP's reducer copied a gradient into a bucket) while ``step()`` runs."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        step()
    names = [e.name for e in prof.events()]
    return names.count("c10d::allreduce_"), any(n.startswith("torch::distributed::reducer::") for n in names)


def buckets_overlap_backward(rank, world_size):
    model, loss_fn = net()
    eager = thunder.distributed.ddp(copy.deepcopy(model), bucket_size_in_mb=SMALL_BUCKETS_MB)
    compiled = thunder.distributed.ddp(copy.deepcopy(model), bucket_size_in_mb=SMALL_BUCKETS_MB)
    jitted = thunder.jit(compiled)
    batches = [torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + i)) for i in range(3)]
    for x in batches:
        loss_fn(eager, x).backward()
        reduces, reducer_ran = _collectives_and_reducer(lambda x=x: loss_fn(jitted, x).backward())
        for (name, p), q in zip(eager.named_parameters(), compiled.parameters(), strict=True):
            torch.testing.assert_close(q.grad, p.grad, msg=lambda m, name=name: f"{name}.grad: {m}")
            p.grad = q.grad = None

    lines = _lines(thunder.last_backward_traces(jitted)[-1])
    issued = [i for i, line in enumerate(lines) if f"{_COLLECTIVE}all_reduce_(" in line]
    waited = [i for i, line in enumerate(lines) if f"{_COLLECTIVE}wait_tensor(" in line]
    computed = [i for i, line in enumerate(lines) if "torch.matmul(" in line]
    assert len(issued) == len(waited) > 2, "the gradients were not reduced in several buckets"
    # the first buckets are in flight while later gradients are computed; all are waited for at the end
    assert issued[0] < computed[-1] and min(waited) > max(issued) and min(waited) > computed[-1]
    # every all-reduce this rank started is the trace's; DDP's reducer did nothing
    assert (reduces, reducer_ran) == (len(issued), False), (reduces, reducer_ran, len(issued))

    # a communication hook is DDP's reducer's: registered, the reducer reduces (and calls it) instead of the trace
    calls = []

    def hook(state, bucket):
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        calls.append(bucket.index())
        return default_hooks.allreduce_hook(state, bucket)

    eager.register_comm_hook(None, hook)
    compiled.register_comm_hook(None, hook)
    for x in batches:
        loss_fn(eager, x).backward()
        calls.clear()
        loss_fn(jitted, x).backward()
        assert calls, "the communication hook was not called"
        for p, q in zip(eager.parameters(), compiled.parameters(), strict=True):
            torch.testing.assert_close(q.grad, p.grad)
            p.grad = q.grad = None


class _Branching(nn.Module):
    """Reads a value from tensor data: the program runs as segments."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        return y * 2 if y.sum().item() > 0 else y


def trace_reduction_refusals(rank, world_size):
    """What the trace cannot reduce as DDP would is refused, naming it and the way out (find_unused_parameters,
    with which DDP's reducer reduces); never run unreduced."""
    # an unused parameter: eager DDP raises at the next step; thunder when it compiles
    model, loss_fn = net()
    model.unused = nn.Linear(8, 8)
    jitted = thunder.jit(thunder.distributed.ddp(model))
    with pytest.raises(UnsupportedError, match=r"parameters unused\.weight, unused\.bias of the DistributedDataParallel "
                                               r"module get no gradient .*find_unused_parameters=True"):
        loss_fn(jitted, torch.randn(4, 8))

    # a program in segments has no single backward to write the buckets into
    torch.manual_seed(0)
    jitted = thunder.jit(thunder.distributed.ddp(_Branching()))
    with pytest.raises(UnsupportedError, match=r"DDPGradientBuckets\.transform_backward_pre_lowering cannot apply .*"
                                               r"reads values from tensor data.*find_unused_parameters=True"):
        jitted(torch.randn(4, 8)).sum().backward()
    # with find_unused_parameters, DDP's reducer reduces it like eager
    torch.manual_seed(0)
    eager = thunder.distributed.ddp(_Branching(), find_unused_parameters=True)
    torch.manual_seed(0)
    compiled = thunder.distributed.ddp(_Branching(), find_unused_parameters=True)
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(rank))
    eager(x).sum().backward()
    thunder.jit(compiled)(x).sum().backward()
    for p, q in zip(eager.parameters(), compiled.parameters(), strict=True):
        torch.testing.assert_close(q.grad, p.grad)


class _TiedFrozen(nn.Module):
    """A weight shared by two modules, a frozen layer, and an input of the forward that requires grad."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        self.mid = nn.Linear(8, 8)
        self.frozen = nn.Linear(8, 8).requires_grad_(False)
        self.head = nn.Linear(8, 16, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, ids, extra):
        return self.head(self.frozen(self.mid(self.emb(ids) + extra).relu()))


def shared_frozen_and_input_gradients(rank, world_size):
    """A shared weight's gradients are summed then reduced once, a frozen parameter gets none, an input's gradient
    stays each rank's own; per dtype (DDP buckets each dtype apart)."""
    torch.manual_seed(0)
    base = _TiedFrozen()
    for dtype in (torch.float32, torch.bfloat16):
        eager = thunder.distributed.ddp(copy.deepcopy(base).to(dtype), bucket_size_in_mb=0.0002)
        compiled = thunder.distributed.ddp(copy.deepcopy(base).to(dtype), bucket_size_in_mb=0.0002)
        jitted = thunder.jit(compiled)
        for step in range(2):
            generator = torch.Generator().manual_seed(7 * rank + step)
            ids, extra = torch.randint(0, 16, (3, 5), generator=generator), torch.randn(3, 5, 8, generator=generator)
            x_eager, x_jit = (extra.to(dtype).requires_grad_() for _ in range(2))
            eager(ids, x_eager).float().square().mean().backward()
            jitted(ids, x_jit).float().square().mean().backward()
            torch.testing.assert_close(x_jit.grad, x_eager.grad)
            for (name, p), q in zip(eager.named_parameters(), compiled.parameters(), strict=True):
                assert (p.grad is None) == (q.grad is None), name
                if p.grad is not None:
                    torch.testing.assert_close(q.grad, p.grad, msg=lambda m, name=name: f"{name}.grad: {m}")
                p.grad = q.grad = None
        assert f"{_COLLECTIVE}all_reduce_(" in str(thunder.last_backward_traces(jitted)[-1])
