"""What each rank runs for FSDP2's gradient reduce-scatter in a compiled unit's backward trace: the reduced shards
written into the sharded parameters' .grad as FSDP2 writes them (uneven shards, a rank with an empty shard,
accumulation over synchronized backwards, post-accumulate-grad hooks, a gradient divide factor), FSDP2's own
reduce idle for those units; FSDP2 reducing instead, with a warning, where the trace would not do what it does."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import thunder

from .training import Net, assert_same_state

_COLLECTIVE = "torch.ops._c10d_functional."
_FALLBACK = (r"FSDP2 all-gathers the parameters of blocks\.\d and reduce-scatters its gradients itself, not in "
             r"thunder's traces")


class OddBlock(nn.Module):
    """Dim 0 of 5 and of 1: padded to the world size, and a rank with no row of the gate."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.gate = nn.Linear(8, 5), nn.Linear(5, 8), nn.Linear(8, 1)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x))) * torch.sigmoid(self.gate(x))


class OddNet(Net):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([OddBlock(), OddBlock()])


def _loss(model, x):
    return model(x).pow(2).mean()


def _eager_and_jitted(configure=lambda model: None, net=OddNet, bucketing="BLOCK"):
    torch.manual_seed(0)
    base = net()
    eager, compiled = (thunder.distributed.fsdp(copy.deepcopy(base), sharding_strategy="ZERO3",
                                                bucketing_strategy=bucketing) for _ in range(2))
    configure(eager), configure(compiled)
    return eager, compiled, thunder.jit(compiled)


def _fsdp_reduces(step) -> int:
    """How many units FSDP2's post-backward reduce-scattered while ``step()`` ran."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        step()
    return sum(e.name.startswith("FSDP::post_backward_reduce") for e in prof.events())


def _hook_counter(model) -> list:
    calls = []
    for name, p in model.named_parameters():
        p.register_post_accumulate_grad_hook(lambda p, name=name: calls.append(name))
    return calls


def reduce_scatter_in_backward_trace(rank, world_size):
    eager, compiled, jitted = _eager_and_jitted()
    eager_calls, jit_calls = _hook_counter(eager), _hook_counter(compiled)
    for step in range(4):  # two backwards accumulate into .grad before each comparison
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step)).requires_grad_()
        x_eager = x.detach().clone().requires_grad_()
        _loss(eager, x_eager).backward()
        # the root (head) is reduced by FSDP2; the compiled blocks in their traces
        assert _fsdp_reduces(lambda x=x: _loss(jitted, x).backward()) == 1
        torch.testing.assert_close(x.grad, x_eager.grad)
        if step % 2:
            assert_same_state(compiled, eager, f"after step {step}", {})
            eager.zero_grad(), compiled.zero_grad()
    assert sorted(jit_calls) == sorted(eager_calls) and jit_calls

    # block 1's reduce-scatter is issued once its last parameter gradient is computed, the gradient of its input is
    # computed while it is in flight, and it is waited for at the end
    lines = [line.strip() for line in str(thunder.last_backward_traces(jitted._run.functions[-1])[-1]).splitlines()]
    issued = next(i for i, line in enumerate(lines) if f"{_COLLECTIVE}reduce_scatter_tensor(" in line)
    pending = lines[issued].split(" = ")[0]
    waited = next(i for i, line in enumerate(lines) if f"{_COLLECTIVE}wait_tensor({pending})" in line)
    # ZERO3: the forward did not keep the gathered parameters; the backward all-gathers them again first (or takes
    # the all-gather the root's backward handed over)
    gathered = next(i for i, line in enumerate(lines) if "fsdp_backward_prefetch.prefetched_or_all_gather(" in line)
    assert gathered < next(i for i, line in enumerate(lines) if "matmul(" in line), "\n".join(lines)
    returned, = (name for name in lines[-1].removeprefix("return (").rstrip(")").replace(",", " ").split()
                 if name != "None")  # the input's gradient: the shards' are written into the sharded .grad
    computed = next(i for i, line in enumerate(lines) if line.startswith(f"{returned} = "))
    assert issued < computed < waited, "\n".join(lines)
    assert sum("fsdp_gradients.write_sharded_grad(" in line for line in lines) == 6

    # without gradient synchronization FSDP2 accumulates, and reduces that with the next step's gradient; then the
    # traces reduce again: (synchronized, FSDP2 reduces in how many units) per backward, no zero_grad between
    for step, (sync, engine_reduces) in enumerate(((True, 1), (False, 0), (True, 3), (True, 1))):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        for model in (eager, compiled):
            model.set_requires_gradient_sync(sync)
        _loss(eager, x).backward()
        assert _fsdp_reduces(lambda x=x: _loss(jitted, x).backward()) == engine_reduces, step
    assert_same_state(compiled, eager, "after a step without gradient synchronization", {})
    eager.zero_grad(), compiled.zero_grad()

    # the whole model one unit (the root): no FSDP2 reduce at all
    whole, whole_compiled, whole_jitted = _eager_and_jitted(bucketing="NONE")
    for step in range(2):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        _loss(whole, x).backward()
        assert _fsdp_reduces(lambda x=x: _loss(whole_jitted, x).backward()) == 0
        assert_same_state(whole_compiled, whole, f"one unit, step {step}", {})

    # a gradient divide factor: the sum over the ranks divided by it (gloo has no PREMUL_SUM, with which FSDP2
    # divides, so eager's average, scaled, is the reference)
    factor = 3.0
    divided, divided_compiled, divided_jitted = _eager_and_jitted()
    for eager_block, block in zip(divided.blocks, divided_compiled.blocks):  # the root (head) would need PREMUL_SUM
        eager_block.set_gradient_divide_factor(world_size)  # eager: the average
        block.set_gradient_divide_factor(factor)
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(rank))
    _loss(divided, x).backward()
    _loss(divided_jitted, x).backward()
    for (name, p), q in zip(divided.blocks.named_parameters(), divided_compiled.blocks.parameters(), strict=True):
        torch.testing.assert_close(q.grad.full_tensor(), p.grad.full_tensor() * world_size / factor,
                                   msg=lambda m, name=name: f"blocks.{name}.grad: {m}")


def engine_reduces_where_the_trace_cannot(rank, world_size):
    """An all-reduce hook (the trace does not call it) and a parameter the forward leaves unused: FSDP2 reduces,
    with a warning saying why, and the results are eager's."""
    hook_calls = []

    def with_hook(model):
        for block in model.blocks:
            block.set_all_reduce_hook(lambda output: hook_calls.append(output.numel()))

    eager, compiled, jitted = _eager_and_jitted(with_hook)
    for step in range(2):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        _loss(eager, x).backward()
        eager_hooks = len(hook_calls)
        if step == 0:
            with pytest.warns(UserWarning, match=f"{_FALLBACK}, because an all-reduce hook"):
                _loss(jitted, x).backward()
        else:
            _loss(jitted, x).backward()
        assert len(hook_calls) == 2 * eager_hooks
        hook_calls.clear()
        assert_same_state(compiled, eager, f"after step {step} (an all-reduce hook)", {})
        eager.zero_grad(), compiled.zero_grad()

    class Unused(OddNet):
        def __init__(self):
            super().__init__()
            self.blocks[0] = UnusedGateBlock()

    eager, compiled, jitted = _eager_and_jitted(net=Unused)
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(rank))
    _loss(eager, x).backward()
    with pytest.warns(UserWarning, match=r"parameters of blocks\.0 and reduce-scatters its gradients itself, not in "
                                         r"thunder's traces, because .*blocks\.0\.gate\.weight, blocks\.0\.gate\.bias"):
        _loss(jitted, x).backward()
    assert_same_state(compiled, eager, "with an unused parameter", {})


class UnusedGateBlock(OddBlock):
    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))
