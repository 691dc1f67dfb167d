"""What each rank runs to compare the collectives thunder's step issues with eager's, under the same wrapper: DDP
and FSDP2 (ZERO3, one unit per block, the root around them) in plain steps and in gradient accumulation (micro-steps
without gradient synchronization, ``no_sync()`` / ``set_requires_gradient_sync(False)``, then a synchronizing one).
Every collective of the engine and of thunder's traces reaches the process group as an op the profiler records with
its tensors' shapes."""

from __future__ import annotations

import copy

import torch

import thunder

from .training import BFLOAT16, assert_same_state, bf16_params_fp32_reduce, gradient_sync, net

# the ops through which the engine's and thunder's collectives reach the process group -> (what it does, the size it
# communicates (gathered, or before scattering) from its first argument's numel and the world size; None where that
# argument is a list, whose sizes the profiler does not record). A functional collective's c10d op (a coalesced one
# for a single tensor) is not counted again.
_OPS = {
    "c10d::_allgather_base_": ("all_gather", lambda numel, world_size: numel),  # (output, input)
    "_c10d_functional::all_gather_into_tensor": ("all_gather", lambda numel, world_size: numel * world_size),
    "c10d::_reduce_scatter_base_": ("reduce_scatter", lambda numel, world_size: numel * world_size),
    "_c10d_functional::reduce_scatter_tensor": ("reduce_scatter", lambda numel, world_size: numel),
    "c10d::allreduce_": ("all_reduce", None),  # DDP's buckets, by its reducer or by the functional all_reduce_
    "c10d::broadcast_": ("broadcast", None),
}
_REDUCING = ("all_reduce", "reduce_scatter")
# DDP's reducer broadcasts rank 0's bucket order in the forwards after the first backward it saw reduce
# gradients: never in thunder's run, where the backward traces reduce every synchronizing step's gradients
_BUCKET_ORDER = "broadcast"

# each step's micro-batches: whether its gradients are synchronized (the last of a step always is)
_SCHEDULE = ((True,), (False, False, True), (True,))


def collectives_issued(step, world_size: int) -> list[tuple[str, str, int | None]]:
    """(what, dtype, elements communicated) of each collective ``step()`` issued, in a fixed order (thunder's traces
    issue the same collectives as eager's engine, some earlier, as FSDP2 prefetches them)."""
    import math

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        step()
    issued = []
    for e in prof.events():
        what, size = _OPS.get(e.name, (None, None))
        if what is not None:
            numel = None if size is None else size(math.prod(e.input_shapes[0]), world_size)
            issued.append((what, e.input_dtypes[0], numel))
    return sorted(issued, key=str)


def _wrap(wrapper, model):
    if wrapper == "ddp":
        return thunder.distributed.ddp(model)
    mp_policy = bf16_params_fp32_reduce() if wrapper == "fsdp_bf16" else None
    return thunder.distributed.fsdp(model, sharding_strategy="ZERO3", bucketing_strategy="BLOCK", mp_policy=mp_policy)


def communicates_like_eager(rank, world_size, wrappers=("ddp", "fsdp")):
    """Each micro-step issues the collectives eager's does: no reduction while accumulating, the accumulated
    gradients reduced in the synchronizing micro-step; under FSDP2 the root's parameters (the head) gathered once
    per micro-step (FSDP2 keeps the root's gathered parameters for the backward), the blocks' twice (ZERO3); with
    bf16 parameters and fp32 reduction, the all-gathers in bf16 and the reduce-scatters in fp32. Gradients and
    parameters equal eager's after every step. ``wrappers``: of "ddp", "fsdp", "fsdp_bf16"."""
    for wrapper in wrappers:
        model, loss_fn = net()
        eager, compiled = _wrap(wrapper, copy.deepcopy(model)), _wrap(wrapper, copy.deepcopy(model))
        jitted = thunder.jit(compiled)
        optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (eager, compiled)]
        root_rows = -(-model.head.weight.shape[0] // world_size)  # the head's weight rows in one shard
        root_gather = (root_rows * 8 + root_rows) * world_size  # weight and bias, gathered
        tolerance = BFLOAT16 if wrapper == "fsdp_bf16" else {}
        bucket_orders = [[], []]
        for step, schedule in enumerate(_SCHEDULE):
            for micro, sync in enumerate(schedule):
                x = torch.randn(4, 8, generator=torch.Generator().manual_seed(100 * rank + 10 * step + micro))
                issued = []
                for m, runner in ((eager, eager), (compiled, jitted)):
                    def run(m=m, runner=runner):
                        with gradient_sync(m, wrapper, enabled=sync):
                            loss_fn(runner, x).backward()

                    issued.append(collectives_issued(run, world_size))
                for orders, ops in zip(bucket_orders, issued):
                    orders += [c for c in ops if c[0] == _BUCKET_ORDER]
                    ops[:] = [c for c in ops if c[0] != _BUCKET_ORDER]
                where = f"{wrapper}, step {step}, micro-step {micro} (synchronized: {sync})"
                assert issued[1] == issued[0], f"{where}: thunder issued {issued[1]}, eager {issued[0]}"
                reductions = [dtype for what, dtype, _ in issued[0] if what in _REDUCING]
                assert bool(reductions) == sync, f"{where}: {issued[0]}"
                if wrapper.startswith("fsdp"):
                    gathers = [size for what, _, size in issued[0] if what == "all_gather"]
                    assert gathers.count(root_gather) == 1 and len(gathers) == 5, f"{where}: {issued[0]}"
                    if wrapper == "fsdp_bf16":
                        dtypes = {(what, dtype) for what, dtype, _ in issued[0]}
                        expected = {("all_gather", "c10::BFloat16")} | ({("reduce_scatter", "float")} if sync else set())
                        assert dtypes == expected, f"{where}: {issued[0]}"
            assert_same_state(compiled, eager, f"{wrapper}, after step {step}", tolerance)
            for opt in optimizers:
                opt.step()
                opt.zero_grad()
        assert (bool(bucket_orders[0]), bucket_orders[1]) == (wrapper == "ddp", []), bucket_orders
