"""What each rank runs for FSDP2's parameter all-gathers in the compiled units' forward traces: with one unit per
block (thunder.distributed.fsdp, bucketing_strategy="BLOCK", which sets FSDP2's forward prefetch), block 0's trace
all-gathers its own parameters and issues block 1's all-gather before it computes; block 1's trace only waits for
it. FSDP2 all-gathers only the root's parameters (the head), which runs eagerly."""

from __future__ import annotations

import copy

import torch
from torch import nn

import thunder
from thunder.distributed import fsdp_backward_prefetch

from .training import Block, net

_COLLECTIVE = "torch.ops._c10d_functional."
_BACKWARD_PREFETCH = "thunder.distributed.fsdp_backward_prefetch."


def _calls(trace) -> list[str]:
    """The trace's calls in order: a collective by its op name, a linear as "linear"."""
    names = []
    for bsym in trace.bound_symbols:
        line = str(bsym)
        if _COLLECTIVE in line:
            names.append(line.split(_COLLECTIVE)[1].split("(")[0])
        elif _BACKWARD_PREFETCH in line:
            names.append(line.split(_BACKWARD_PREFETCH)[1].split("(")[0])
        elif "functional.linear" in line:
            names.append("linear")
    return names


def _sharded_twice(model, strategy: str):
    """Two copies of ``model``, each with one unit per block and the root: (eager, compiled, the jitted compiled)."""
    eager, compiled = (thunder.distributed.fsdp(copy.deepcopy(model), sharding_strategy=strategy,
                                                bucketing_strategy="BLOCK") for _ in range(2))
    return eager, compiled, thunder.jit(compiled)


def _backward_like_eager(loss_fn, eager, jitted, x) -> None:
    """Eager's forward and backward, then the jitted model's: the same loss."""
    expected = loss_fn(eager, x)
    expected.backward()
    loss = loss_fn(jitted, x)
    loss.backward()
    torch.testing.assert_close(loss, expected)


def forward_prefetch(rank, world_size):
    from .training import assert_same_state

    model, loss_fn = net()
    eager, compiled, jitted = _sharded_twice(model, "ZERO3")
    for step in range(2):  # traced, then cached
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        expected = loss_fn(eager, x)
        expected.backward()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            loss = loss_fn(jitted, x)
            loss.backward()
        torch.testing.assert_close(loss, expected)
        assert_same_state(compiled, eager, f"with the forward prefetch, step {step}", {})
        eager.zero_grad(), compiled.zero_grad()
    fsdp_gathers = [e.name for e in prof.events() if e.name.split(" ")[0] == "FSDP::all_gather"]
    assert fsdp_gathers and not any("blocks" in name for name in fsdp_gathers), fsdp_gathers  # the root's only
    block0, block1 = (thunder.last_traces(f)[-1] for f in jitted._run.functions)
    # block 0: its all-gather, waited for; block 1's issued; then its two linears
    assert _calls(block0) == ["all_gather_into_tensor", "wait_tensor", "all_gather_into_tensor", "linear",
                              "linear"], block0
    assert _calls(block1) == ["wait_tensor", "linear", "linear"], block1  # waits for what block 0 issued
    assert [a.name for a in block1.args][-2] == "pending", block1


def evaluation_between_steps(rank, world_size):
    """A forward without grad between training steps (FSDP2's hooks gather then; with ZERO2 the parameters stay
    gathered after it, so the next training forward's units use FSDP2's gathered parameters, and the one after
    gathers in its trace again): outputs, gradients and parameters equal eager's."""

    from .training import assert_same_state

    model, loss_fn = net()
    eager, compiled, jitted = _sharded_twice(model, "ZERO2")
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager, compiled)]
    for step in range(3):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        with torch.no_grad():
            torch.testing.assert_close(jitted(x), eager(x))
        _backward_like_eager(loss_fn, eager, jitted, x)
        assert_same_state(compiled, eager, f"after evaluating and training, step {step}", {})
        for opt in optimizers:
            opt.step()
            opt.zero_grad()


def mixed_precision_per_unit(rank, world_size):
    """Blocks computing in bf16 between an fp32 root: FSDP2's casts of a unit's inputs to its param_dtype and of its
    outputs to its output_dtype, done in the blocks' traces, as eager does them."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    from .training import BFLOAT16, assert_same_state

    def shard(model):
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32,
                                      output_dtype=torch.float32)
        for block in model.blocks:
            fully_shard(block, mp_policy=policy)
        return fully_shard(model)

    model, loss_fn = net()
    eager, compiled = shard(copy.deepcopy(model)), shard(copy.deepcopy(model))
    jitted = thunder.jit(compiled)
    for step in range(2):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        torch.testing.assert_close(loss_fn(jitted, x), loss_fn(eager, x).detach(), **BFLOAT16)
        for m in (eager, compiled):
            loss_fn(jitted if m is compiled else m, x).backward()
        assert_same_state(compiled, eager, f"blocks in bf16, step {step}", BFLOAT16)
        eager.zero_grad(), compiled.zero_grad()
    block0 = str(thunder.last_traces(jitted._run.functions[0])[-1])
    assert "bfloat16" in block0 and "float32" in block0, block0  # the casts are in the trace


def block_called_twice(rank, world_size):
    """A block called twice in one forward: its second call gathers its parameters itself (the next block's
    all-gather is already pending), gradients of both calls reduced: equal to eager."""

    from .training import Net, assert_same_state

    class Twice(Net):
        def forward(self, x):
            x = self.blocks[0](self.blocks[0](x))
            return self.head(self.blocks[1](x))

    torch.manual_seed(0)
    eager, compiled, jitted = _sharded_twice(Twice(), "ZERO3")
    for step in range(2):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        expected, actual = eager(x).pow(2).mean(), jitted(x).pow(2).mean()
        torch.testing.assert_close(actual, expected)
        expected.backward(), actual.backward()
        assert_same_state(compiled, eager, f"a block called twice, step {step}", {})
        eager.zero_grad(), compiled.zero_grad()


def _collectives_run(step) -> list[str]:
    """The functional collectives ``step()`` issued, in order (the profiler's record of the ops)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        step()
    names = [e.name.split("::")[-1].rstrip("_") for e in sorted(prof.events(), key=lambda e: e.time_range.start)
             if e.name.startswith("_c10d_functional::") and "wait" not in e.name]
    return names


def backward_prefetch(rank, world_size):
    """ZERO3 blocks: the root's backward starts by handing block 1's all-gather over; block 1's backward trace takes
    it, then issues block 0's all-gather and hands it over; block 0's backward takes it (no all-gather of its own
    when it runs), so both all-gathers are issued before block 1's reduce-scatter, as FSDP2's backward prefetch
    issues them; gradients and parameters equal eager's."""

    from .training import assert_same_state

    model, loss_fn = net()
    eager, compiled, jitted = _sharded_twice(model, "ZERO3")
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (eager, compiled)]
    for step in range(3):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        expected = loss_fn(eager, x)
        expected.backward()
        loss = loss_fn(jitted, x)
        torch.testing.assert_close(loss, expected)
        issued = _collectives_run(loss.backward)
        assert issued == ["all_gather_into_tensor", "all_gather_into_tensor", "reduce_scatter_tensor",
                          "reduce_scatter_tensor"], issued
        assert_same_state(compiled, eager, f"with the backward prefetch, step {step}", {})
        for opt in optimizers:
            opt.step()
            opt.zero_grad()
    # the root's backward (FSDP2's, natively) started by handing block 1's all-gather over, issued by a function
    # compiled for it
    prefetcher = jitted._run.units[1].prefetcher
    assert thunder.compile_stats(prefetcher).calls == 3, thunder.compile_stats(prefetcher).calls
    assert _calls(thunder.last_traces(prefetcher)[-1]) == ["all_gather_into_tensor"]
    block0, block1 = (_calls(thunder.last_backward_traces(f)[-1]) for f in jitted._run.functions)
    # block 1: its all-gather (handed over by the root) waited for, block 0's shards read, all-gathered and handed
    # over before block 1's reduce-scatter; block 0: the all-gather handed over, waited for
    shards = ["read_local_shard"] * 4
    assert block1[:7] == ["prefetched_or_all_gather", "wait_tensor", *shards, "all_gather_and_hand_over"], block1
    assert block0[:2] == ["prefetched_or_all_gather", "wait_tensor"] and "all_gather_and_hand_over" not in block0, block0


def backward_prefetch_not_taken(rank, world_size):
    """Block 0's output detached: its backward never runs, so the all-gather block 1's backward hands over to it is
    waited for when the backward ends, not left pending; gradients (block 0's none) and parameters equal eager's."""
    from .training import Net, assert_same_state

    class Detached(Net):
        def forward(self, x):
            return self.head(self.blocks[1](self.blocks[0](x).detach()))

    torch.manual_seed(0)
    eager, compiled, jitted = _sharded_twice(Detached(), "ZERO3")
    for step in range(2):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        expected = eager(x).pow(2).mean()
        expected.backward()
        loss = jitted(x).pow(2).mean()
        torch.testing.assert_close(loss, expected)
        assert _collectives_run(loss.backward).count("all_gather_into_tensor") == 2  # block 1's and block 0's
        assert not fsdp_backward_prefetch._HANDED_OVER
        assert_same_state(compiled, eager, f"block 0 detached, step {step}", {})
        assert all(p.grad is None for p in compiled.blocks[0].parameters())
    assert "all_gather_and_hand_over" in _calls(thunder.last_backward_traces(jitted._run.functions[1])[-1])


def explicit_backward_prefetch(rank, world_size):
    """FSDP2's ``set_modules_to_backward_prefetch``: block 1 told to prefetch block 0 hands block 0's all-gather over
    in its backward trace; told to prefetch the root (whose parameters stay gathered), it prefetches none, and
    block 0's backward gathers its own. Gradients and parameters equal eager's."""
    from .training import assert_same_state

    model, loss_fn = net()
    for target, hands_over in ((lambda m: m.blocks[0], True), (lambda m: m, False)):
        eager, compiled, jitted = _sharded_twice(model, "ZERO3")
        for m in (eager, compiled):
            m.blocks[1].set_modules_to_backward_prefetch([target(m)])
        for step in range(2):
            x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
            _backward_like_eager(loss_fn, eager, jitted, x)
            assert_same_state(compiled, eager, f"backward prefetch set explicitly, step {step}", {})
            eager.zero_grad(), compiled.zero_grad()
        block1 = _calls(thunder.last_backward_traces(jitted._run.functions[1])[-1])
        assert ("all_gather_and_hand_over" in block1) == hands_over, block1


def hooks_registered_during_a_call(rank, world_size):
    """Forward hooks of the compiled blocks added while the jitted model runs (by a hook of the root, at its first
    call) and between calls stay registered and run on every later call, as in eager; FSDP2's own forward hooks of
    the blocks step aside only while the jitted model runs: the same model called directly afterwards is FSDP2's
    eager model. Outputs, gradients and parameters equal eager's."""
    from .training import assert_same_state

    model, loss_fn = net()
    eager, compiled, jitted = _sharded_twice(model, "ZERO3")
    ran = {id(m): [] for m in (eager, compiled)}
    for m in (eager, compiled):
        def register_once(module, args, m=m):
            if not ran[id(m)]:
                ran[id(m)].append("registered")
                m.blocks[0].register_forward_hook(lambda block, a, out, m=m: ran[id(m)].append("block 0") or out * 0.5)

        m.register_forward_pre_hook(register_once)
    for step in range(4):
        if step == 2:  # between calls
            for m in (eager, compiled):
                m.blocks[1].register_forward_pre_hook(lambda block, a, m=m: ran[id(m)].append("block 1") or (a[0] * 2,))
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
        _backward_like_eager(loss_fn, eager, compiled if step == 3 else jitted, x)  # step 3: called directly
        assert_same_state(compiled, eager, f"hooks added during and between calls, step {step}", {})
        eager.zero_grad(), compiled.zero_grad()
    assert ran[id(compiled)] == ran[id(eager)] == ["registered"] + ["block 0"] * 2 + ["block 0", "block 1"] * 2, ran
    assert thunder.compile_stats(jitted._run.functions[0]).calls == 3


class _ThreeBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block(), Block()])
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


# FSDP2 prefetch targets set explicitly beside thunder.distributed.fsdp's forward prefetch (block i -> i + 1) and
# FSDP2's default backward prefetch (the unit whose forward ran before)
_EXPLICIT_PREFETCH = {
    # block 2's backward prefetches block 0, whose all-gather block 1's backward would prefetch by default too
    "block 2 -> block 0 in the backward": lambda m: m.blocks[2].set_modules_to_backward_prefetch([m.blocks[0]]),
    # the root (natively run) prefetches block 2 when its backward starts, in place of its default (the last block)
    "root -> block 2 in the backward": lambda m: m.set_modules_to_backward_prefetch([m.blocks[2]]),
    # the root prefetches block 0 in its forward (FSDP2's own prefetch of a compiled block: the block's trace takes it)
    "root -> block 0 in the forward": lambda m: m.set_modules_to_forward_prefetch([m.blocks[0]]),
}


def explicit_and_default_prefetch_mixed(rank, world_size):
    """FSDP2 prefetch targets set explicitly mixed with the default ones: every step issues the collectives eager
    issues (each parameter gathered once in the forward and once in the backward, ZERO3), every block's traces
    gather its parameters on every step, and gradients and parameters equal eager's."""
    from .communication import collectives_issued
    from .training import assert_same_state

    torch.manual_seed(0)
    model = _ThreeBlocks()
    for what, set_targets in _EXPLICIT_PREFETCH.items():
        eager, compiled, jitted = _sharded_twice(model, "ZERO3")
        for m in (eager, compiled):
            set_targets(m)
        optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (eager, compiled)]
        for step in range(3):
            x = torch.randn(4, 8, generator=torch.Generator().manual_seed(10 * rank + step))
            issued = [collectives_issued(lambda r=r: r(x).pow(2).mean().backward(), world_size) for r in (eager, jitted)]
            assert issued[1] == issued[0], f"{what}, step {step}: thunder issued {issued[1]}, eager {issued[0]}"
            assert_same_state(compiled, eager, f"{what}, step {step}", {})
            for opt in optimizers:
                opt.step()
                opt.zero_grad()
        calls = [thunder.compile_stats(unit.gathering).calls for unit in jitted._run.units]
        assert calls == [3, 3, 3], f"{what}: the blocks' gathering traces ran {calls} times"
        assert not fsdp_backward_prefetch._HANDED_OVER
