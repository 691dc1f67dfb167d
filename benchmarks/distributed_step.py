"""A data-parallel training step (forward, backward with the engine's gradient communication, AdamW step) under
DDP and FSDP2 on 2 CPU processes (gloo): eager vs thunder.jit, side by side in one run. Writes
benchmarks/results/distributed-step-<date>.json.

Each rank trains copies of a litgpt GPT (same weights, same batches) under the same wrapper, one eager and one
jitted (for DDP also a jitted one whose gradients DDP's reducer all-reduces when the backward has ended, where
thunder's backward trace otherwise all-reduces each bucket during the backward); their steps are interleaved round
by round so that load from other processes hits all alike, and the median of rank 0's step times is reported (the
ranks wait for each other in every collective). The first step (tracing included) is reported apart. Losses are
checked equal.

Bytes communicated: the bytes of the tensors each rank hands to collectives in one step (DDP: the gradient
buckets it all-reduces; FSDP2: the parameters it all-gathers, in the forward and again in the backward, and the
gradients it reduce-scatters, gathered size), counted in one extra step of each variant: eager DDP's buckets
through a DDP comm hook, FSDP2's by wrapping the collectives it calls, and the collectives of thunder's backward
traces (DDP's buckets all-reduced, which a comm hook would hand back to DDP's reducer, and the compiled FSDP2 units'
gradients reduce-scattered, their parameters all-gathered in the forward) from the profiler's record of the
functional collectives. Wire traffic depends on
the backend's algorithm (a ring all-reduce sends about twice the payload).

Boundary overhead (thunder variants): the median time per call that the jitted model spends outside the engine's
model it calls (thunder/distributed/boundaries.py: swapping the compiled forwards in, FSDP2's hooks stepping aside,
the root's backward prefetch hooked), timed around both calls.

    python benchmarks/distributed_step.py [--steps N] [--world-size 2] [--tag -SUFFIX]
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import pathlib
import platform
import statistics
import tempfile
import time
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

import thunder

ROOT = pathlib.Path(__file__).resolve().parents[1]
VOCAB = 512


def litgpt_model():
    import litgpt

    config = litgpt.Config(block_size=128, vocab_size=VOCAB, padded_vocab_size=VOCAB, n_layer=2, n_head=4, n_embd=256,
                           n_query_groups=2, intermediate_size=688, mlp_class_name="LLaMAMLP",
                           norm_class_name="RMSNorm", bias=False, rotary_percentage=1.0, parallel_residual=False)
    torch.manual_seed(0)
    return litgpt.GPT(config)


def loss_fn(model, ids):
    logits = model(ids[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())


def wrap(model, wrapper):
    if wrapper == "ddp":
        return thunder.distributed.ddp(model)
    return thunder.distributed.fsdp(model, sharding_strategy="ZERO3", bucketing_strategy="BLOCK")


# counting the bytes handed to collectives ---------------------------------------------------------------------------

class Counter:
    bytes = 0
    calls = 0
    active = False


def _counting(collective):
    def counted(output, input, *args, **kwargs):
        if Counter.active:
            Counter.bytes += max(output.numel() * output.element_size(), input.numel() * input.element_size())
        return collective(output, input, *args, **kwargs)

    return counted


def _count_fsdp_collectives():
    for name in ("all_gather_single", "reduce_scatter_single"):
        setattr(dist, name, _counting(getattr(dist, name)))


def _counting_allreduce_hook(state, bucket):
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    if Counter.active:
        buffer = bucket.buffer()
        Counter.bytes += buffer.numel() * buffer.element_size()
        Counter.calls += 1
    return default_hooks.allreduce_hook(state, bucket)


# the functional collectives of thunder's traces -> how many times its input's size the bytes handed to it are
# (counted as FSDP2's are counted: the larger of input and output)
_TRACE_COLLECTIVES = {"_c10d_functional::all_reduce": lambda world_size: 1,
                      "_c10d_functional::reduce_scatter_tensor": lambda world_size: 1,
                      "_c10d_functional::all_gather_into_tensor": lambda world_size: world_size}


def _trace_collective_bytes(step, model) -> tuple[int, int]:
    """(bytes, all-reduces) of the functional collectives ``step()`` issues: thunder's traces' (DDP's buckets
    all-reduced in the backward; FSDP2 units' parameters all-gathered in the forward and gradients reduce-scattered
    in the backward; the model's parameters and gradients are all of one dtype)."""
    import math

    element_size = next(model.parameters()).element_size()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        step()
    world_size = dist.get_world_size()
    total = all_reduces = 0
    for e in prof.events():
        op = e.name.split("(")[0].rstrip("_")
        if op in _TRACE_COLLECTIVES:
            total += math.prod(e.input_shapes[0]) * element_size * _TRACE_COLLECTIVES[op](world_size)
            all_reduces += op == "_c10d_functional::all_reduce"
    return total, all_reduces


# thunder_ddp_reducer: thunder with DDP's reducer reducing when the backward has ended (what the trace's buckets
# replace), to show what their overlap with the backward gains
VARIANTS = {"ddp": ("eager", "thunder", "thunder_ddp_reducer"), "fsdp": ("eager", "thunder")}


# the boundary's own work per call ----------------------------------------------------------------------------------

class CallTimer:
    """Nanoseconds of each call of the jitted model (``outer``) and of the engine's model inside it (``inner``: its
    class swapped for a subclass that times ``__call__``); their difference is the boundary's own work."""

    def __init__(self, jitted, model):
        self.jitted, self.outer, self.inner = jitted, [], []
        cls, inner = type(model), self.inner

        def timed_call(module, *args, **kwargs):
            start = time.perf_counter_ns()
            try:
                return cls.__call__(module, *args, **kwargs)
            finally:
                inner.append(time.perf_counter_ns() - start)

        model.__class__ = type(cls.__name__, (cls,), {"__call__": timed_call})

    def __call__(self, *args, **kwargs):
        start = time.perf_counter_ns()
        try:
            return self.jitted(*args, **kwargs)
        finally:
            self.outer.append(time.perf_counter_ns() - start)

    def overhead_us(self, first: int) -> float:
        """Median microseconds per call outside the engine's model, of the calls from ``first`` on."""
        return statistics.median(o - i for o, i in zip(self.outer[first:], self.inner[first:], strict=True)) / 1e3


# one rank -----------------------------------------------------------------------------------------------------------

def _step(model, runner, opt, ids):
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    loss = loss_fn(runner, ids)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.detach(), (time.perf_counter() - start_wall) * 1e3, (time.process_time() - start_cpu) * 1e3


def _measure(rank, wrapper, steps):
    base = litgpt_model()
    variants = {}
    for name in VARIANTS[wrapper]:
        model = wrap(copy.deepcopy(base), wrapper)
        if name == "thunder_ddp_reducer":  # a comm hook hands the reduction back to DDP's reducer
            model.register_comm_hook(None, _counting_allreduce_hook)
        runner = CallTimer(thunder.jit(model), model) if name.startswith("thunder") else model
        variants[name] = {"model": model, "runner": runner, "opt": torch.optim.AdamW(model.parameters(), lr=1e-3),
                          "wall": [], "cpu": [], "losses": []}
    generator = torch.Generator().manual_seed(100 + rank)
    batches = [torch.randint(0, VOCAB, (4, 129), generator=generator) for _ in range(steps + 2)]
    for i, ids in enumerate(batches[:steps + 1]):
        for v in variants.values():
            loss, wall, cpu = _step(v["model"], v["runner"], v["opt"], ids)
            v["losses"].append(loss)
            if i == 0:
                v["first_step_s"] = wall / 1e3
            else:
                v["wall"].append(wall)
                v["cpu"].append(cpu)
    for v in variants.values():
        if isinstance(v["runner"], CallTimer):  # the timed steps' calls, the first (tracing) left out
            v["boundary_us_per_call"] = round(v["runner"].overhead_us(1), 1)
    for name, v in variants.items():  # one more step, counting the bytes handed to collectives
        if name == "eager" and wrapper == "ddp":
            v["model"].register_comm_hook(None, _counting_allreduce_hook)
        Counter.bytes, Counter.calls, Counter.active = 0, 0, True
        traced_bytes, traced_all_reduces = _trace_collective_bytes(
            lambda v=v: _step(v["model"], v["runner"], v["opt"], batches[-1]), base)
        Counter.active = False
        v["bytes_per_step"] = Counter.bytes + traced_bytes
        if wrapper == "ddp":
            v["all_reduces_per_step"] = Counter.calls + traced_all_reduces
    eager = variants["eager"]
    result = {"wrapper": wrapper, "parameters": sum(p.numel() for p in base.parameters())}
    for name, v in variants.items():
        wall = statistics.median(v["wall"])
        quartiles = statistics.quantiles(v["wall"], n=4)
        result[name] = {
            "step_ms": round(wall, 2), "step_ms_iqr": [round(quartiles[0], 2), round(quartiles[2], 2)],
            "step_cpu_ms": round(statistics.median(v["cpu"]), 2), "first_step_s": round(v["first_step_s"], 3),
            "over_eager": round(wall / statistics.median(eager["wall"]), 3),
            "bytes_communicated_per_step": v["bytes_per_step"],
            **({"all_reduces_per_step": v["all_reduces_per_step"]} if "all_reduces_per_step" in v else {}),
            **({"boundary_us_per_call": v["boundary_us_per_call"]} if "boundary_us_per_call" in v else {}),
            "max_loss_diff_vs_eager": max(abs(a - b).item() for a, b in zip(v["losses"], eager["losses"])),
        }
    return result


def _rank_main(rank, world_size, init_file, steps, out_file):
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    _count_fsdp_collectives()
    try:
        results = [_measure(rank, wrapper, steps) for wrapper in ("ddp", "fsdp")]
        if rank == 0:
            pathlib.Path(out_file).write_text(json.dumps(results))
    finally:
        dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--tag", default="", help="appended to the result file's name (distributed-step-<date><tag>)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out_file = os.path.join(tmp, "results.json")
        mp.start_processes(_rank_main, args=(args.world_size, os.path.join(tmp, "rendezvous"), args.steps, out_file),
                           nprocs=args.world_size, start_method="spawn")
        results = json.loads(pathlib.Path(out_file).read_text())
    record = {
        "benchmark": "distributed_step",
        "what": (f"forward + backward + AdamW step of a litgpt GPT under DDP (DDP's default buckets: 1 MiB first, then "
                 f"25 MiB; thunder_ddp_reducer: DDP's reducer reduces after the backward instead of thunder's trace "
                 f"during it) and FSDP2 (ZERO3, one unit per block, the root's parameters kept from the forward for "
                 f"the backward as FSDP2 keeps them; thunder: each block's all-gather in its forward trace, the next "
                 f"block's prefetched there, gathered again in its backward trace, where the block before's is "
                 f"prefetched, its gradients reduce-scattered there), "
                 f"{args.world_size} CPU processes on gloo, median ms on rank 0 over {args.steps} interleaved steps; "
                 f"torch threads = 1 per process; bytes: tensors handed to collectives per rank per step"),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.machine(), "cpus": os.cpu_count(),
                    "world_size": args.world_size, "load_average": list(os.getloadavg())},
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "thunder": thunder.__version__},
        "results": results,
    }
    for r in results:
        for name in VARIANTS[r["wrapper"]]:
            v = r[name]
            boundary = f"  boundary {v['boundary_us_per_call']} us/call" if "boundary_us_per_call" in v else ""
            print(f"{r['wrapper']:5s} {name:20s} {v['step_ms']:8.2f} ms ({v['over_eager']:.3f}x eager)  "
                  f"bytes/step {v['bytes_communicated_per_step']}{boundary}")
    path = ROOT / "benchmarks" / "results" / f"distributed-step-{datetime.date.today().isoformat()}{args.tag}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
