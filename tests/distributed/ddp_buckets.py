"""What each rank runs for DDP's gradient reduction in the backward trace: bucketed all-reduces issued while the
backward still computes, DDP's reducer idle, the gradients DDP's own would be; DDP's reducer where the trace
cannot do what it does (a communication hook, unused parameters, a program in segments); gradients PyTorch's
autograd accumulates inside thunder's backward (checkpointed blocks) refused."""

from __future__ import annotations

import contextlib
import copy

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

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

    issued = _assert_buckets_overlap(thunder.last_backward_traces(jitted)[-1])
    # every all-reduce this rank started is the trace's; DDP's reducer did nothing
    assert (reduces, reducer_ran) == (issued, False), (reduces, reducer_ran, issued)

    accumulation_overlaps_backward(rank, world_size, model, loss_fn)

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


def _assert_buckets_overlap(trace) -> int:
    """The backward ``trace`` all-reduces the gradients in several buckets, the first ones issued while later
    gradients are computed, all waited for at the end; returns how many."""
    lines = _lines(trace)
    issued = [i for i, line in enumerate(lines) if f"{_COLLECTIVE}all_reduce_(" in line]
    waited = [i for i, line in enumerate(lines) if f"{_COLLECTIVE}wait_tensor(" in line]
    computed = [i for i, line in enumerate(lines) if "torch.matmul(" in line]
    assert len(issued) == len(waited) > 2, f"the gradients were not reduced in several buckets: {trace}"
    assert issued[0] < computed[-1] and min(waited) > max(issued) and min(waited) > computed[-1], trace
    return len(issued)


def accumulation_overlaps_backward(rank, world_size, model, loss_fn):
    """Gradient accumulation: two micro-steps under ``no_sync()``, then a synchronizing one, for several optimizer
    steps. The synchronizing step's backward trace reduces each gradient plus the one accumulated in ``.grad``,
    bucket by bucket, overlapping the rest of the backward as a plain step's does, DDP's reducer idle; the
    gradients and parameters equal eager DDP's after every cycle."""
    from .training import assert_same_state

    eager = thunder.distributed.ddp(copy.deepcopy(model), bucket_size_in_mb=SMALL_BUCKETS_MB)
    compiled = thunder.distributed.ddp(copy.deepcopy(model), bucket_size_in_mb=SMALL_BUCKETS_MB)
    jitted = thunder.jit(compiled)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (eager, compiled)]
    for step in range(3):
        for micro in range(3):
            x = torch.randn(4, 8, generator=torch.Generator().manual_seed(100 * rank + 10 * step + micro))
            for m, runner in ((eager, eager), (compiled, jitted)):
                if micro < 2:
                    with m.no_sync():
                        loss_fn(runner, x).backward()
                elif m is eager:
                    loss_fn(runner, x).backward()
                else:
                    reduces, reducer_ran = _collectives_and_reducer(lambda x=x: loss_fn(jitted, x).backward())
        assert_same_state(compiled, eager, f"after accumulation cycle {step}", {})
        for opt in optimizers:
            opt.step()
            opt.zero_grad()
        assert_same_state(compiled, eager, f"after the optimizer step of cycle {step}", {})
    accumulating = jitted._run.accumulating._tfn
    assert thunder.compile_stats(accumulating).calls == 3
    trace = thunder.last_backward_traces(accumulating)[-1]
    issued = _assert_buckets_overlap(trace)
    assert (reduces, reducer_ran) == (issued, False), (reduces, reducer_ran, issued)
    assert str(trace).count("gradient_buckets.add_accumulated_grad(") == len(list(model.parameters())), trace


class _Branching(nn.Module):
    """Reads a value from tensor data: the program runs as segments."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        return y * 2 if y.sum().item() > 0 else y


class _Checkpointed(nn.Module):
    """Blocks under torch.utils.checkpoint: thunder runs each under PyTorch's autograd, which accumulates the
    blocks' parameters' gradients itself."""

    def __init__(self):
        super().__init__()
        self.net = net()[0]
        self.pre = nn.Linear(8, 8)  # the checkpointed blocks' input requires grad

    def forward(self, x):
        x = self.pre(x)
        for block in self.net.blocks:
            x = checkpoint(block, x, use_reentrant=False)
        return self.net.head(x)


def _eager_and_jitted(make, **ddp_options):
    torch.manual_seed(0)
    eager = thunder.distributed.ddp(make(), **ddp_options)
    torch.manual_seed(0)
    compiled = thunder.distributed.ddp(make(), **ddp_options)
    return eager, compiled, thunder.jit(compiled)


def reducer_fallbacks(rank, world_size):
    """Where the backward trace cannot hold every gradient, DDP's reducer reduces (with a warning saying why), as
    in eager: never unreduced, never refused where eager runs."""
    no_overlap = r"DDP's reducer all-reduces this model's gradients when the backward has ended, not overlapping it"
    for make, why in ((_Branching, r"reads values from tensor data"),):
        eager, compiled, jitted = _eager_and_jitted(make)
        for step in range(2):
            x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
            eager(x).square().mean().backward()
            if step == 0:
                with pytest.warns(UserWarning, match=f"{no_overlap}, because .*{why}"):
                    jitted(x).square().mean().backward()
            else:
                jitted(x).square().mean().backward()
            for (name, p), q in zip(eager.named_parameters(), compiled.parameters(), strict=True):
                torch.testing.assert_close(q.grad, p.grad, msg=lambda m, name=name: f"{name}.grad: {m}")
                p.grad = q.grad = None

    # a parameter the forward leaves unused without find_unused_parameters: DDP's reducer raises eager's error at
    # the next step
    def with_unused():
        model = net()[0]
        model.unused = nn.Linear(8, 8)
        return model

    eager, compiled, jitted = _eager_and_jitted(with_unused)
    x = torch.randn(4, 8)
    eager(x).sum().backward()
    with pytest.warns(UserWarning, match=rf"{no_overlap}, because .*unused\.weight, unused\.bias"):
        jitted(x).sum().backward()
    for model in (eager, jitted):
        with pytest.raises(RuntimeError, match="Expected to have finished reduction in the prior iteration"):
            model(x)

    # gradients PyTorch's autograd accumulates inside thunder's backward (checkpointed blocks): DDP's reducer would
    # reduce before they exist, so neither reduces: refused, naming them
    eager, compiled, jitted = _eager_and_jitted(_Checkpointed)
    with pytest.raises(UnsupportedError, match=r"parameters \(net\.blocks\.0\.fc1\.weight.*\) may get their gradients "
                                               r"inside a call .*torch\.utils\.checkpoint"):
        jitted(torch.randn(4, 8))


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
    stays each rank's own; per dtype (DDP buckets each dtype apart); in a plain step and in the synchronizing step
    after a step under ``no_sync()`` (the trace adds the accumulated .grad)."""
    torch.manual_seed(0)
    base = _TiedFrozen()
    for dtype in (torch.float32, torch.bfloat16):
        eager = thunder.distributed.ddp(copy.deepcopy(base).to(dtype), bucket_size_in_mb=0.0002)
        compiled = thunder.distributed.ddp(copy.deepcopy(base).to(dtype), bucket_size_in_mb=0.0002)
        jitted = thunder.jit(compiled)
        for step, sync in enumerate((True, False, True)):
            generator = torch.Generator().manual_seed(7 * rank + step)
            ids, extra = torch.randint(0, 16, (3, 5), generator=generator), torch.randn(3, 5, 8, generator=generator)
            x_eager, x_jit = (extra.to(dtype).requires_grad_() for _ in range(2))
            with contextlib.ExitStack() as stack:
                if not sync:
                    stack.enter_context(eager.no_sync())
                    stack.enter_context(compiled.no_sync())
                eager(ids, x_eager).float().square().mean().backward()
                jitted(ids, x_jit).float().square().mean().backward()
            torch.testing.assert_close(x_jit.grad, x_eager.grad)
            if not sync:
                continue
            for (name, p), q in zip(eager.named_parameters(), compiled.parameters(), strict=True):
                assert (p.grad is None) == (q.grad is None), name
                if p.grad is not None:
                    torch.testing.assert_close(q.grad, p.grad, msg=lambda m, name=name: f"{name}.grad: {m}")
                p.grad = q.grad = None
        assert f"{_COLLECTIVE}all_reduce_(" in str(thunder.last_backward_traces(jitted)[-1])
        accumulating = str(thunder.last_backward_traces(jitted._run.accumulating._tfn)[-1])
        assert accumulating.count("add_accumulated_grad(") == 3, accumulating  # emb (and head), mid, not frozen


def parameter_hooks_see_each_ranks_gradient(rank, world_size):
    """Gradient hooks on parameters see each rank's own gradient, as in eager, where DDP's reducer reduces after them:
    a hook changing a weight's gradient (not linearly: reducing before it would give another result) and a
    post-accumulate-grad hook recording a bias's accumulated gradient, in plain steps and in the synchronizing step
    after a ``no_sync()`` one. Gradients, parameters and what the hooks saw equal eager's."""
    from .training import assert_same_state, gradient_sync

    model, loss_fn = net()
    eager, compiled = (thunder.distributed.ddp(copy.deepcopy(model)) for _ in range(2))
    jitted = thunder.jit(compiled)
    seen = {id(eager): [], id(compiled): []}
    for m in (eager, compiled):
        m.module.blocks[0].fc1.weight.register_hook(lambda g: g * g.abs())
        m.module.head.bias.register_post_accumulate_grad_hook(lambda p, m=m: seen[id(m)].append(p.grad.clone()))
    for step, sync in enumerate((True, False, True, True)):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        for m, runner in ((eager, eager), (compiled, jitted)):
            with gradient_sync(m, "ddp", enabled=sync):
                loss_fn(runner, x).backward()
        if sync:
            assert_same_state(compiled, eager, f"with gradient hooks, step {step}", {})
            eager.zero_grad(), compiled.zero_grad()
    assert len(seen[id(compiled)]) == len(seen[id(eager)]) == 4, seen
    for actual, expected in zip(seen[id(compiled)], seen[id(eager)]):
        torch.testing.assert_close(actual, expected)
