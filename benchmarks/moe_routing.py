"""Mixture-of-experts routing on CPU, one thread: a training step (forward + backward) of one MoE layer written the
way transformers' "eager" experts are (``nonzero`` of the experts hit, a Python loop over them, ``torch.where`` of
each expert's tokens, ``index_add_`` back), 8 experts, top-2, 1024 tokens. Eager vs torch.compile (default mode)
vs thunder.jit, side by side in one run. Outputs and gradients of every variant are checked against eager's first.

Two input streams: "same batch" (the routing is the same on every step) and "new batch" (new tokens each step, so
each expert's token count changes: thunder's sizes read from tensor data stay symbolic, so its continuations are
reused; see docs/values-from-tensor-data.md). A "tiny" layer (16 tokens, width 8) shows the per-step overhead
when the kernels cost nothing: thunder's checks of the values read at each split are in it.

Each step is timed by the wall clock (``step_ms``) and by this thread's CPU time (``step_cpu_ms``, which the other
jobs of a shared machine change least). For thunder it also records the cost of checking the values read on a cache
hit (``value_check_cost_new_batch``). Writes benchmarks/results/moe-routing-<date><--suffix>.json (device, versions,
date, the machine's load average before and after).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import time
import warnings

import torch

import thunder

ROOT = pathlib.Path(__file__).resolve().parents[1]


class EagerExpertsMoE(torch.nn.Module):
    """Router + experts as 3-d weights; the experts loop of transformers 5.x's MixtralExperts (eager)."""

    def __init__(self, hidden: int, ffn: int, experts: int = 8, top_k: int = 2):
        super().__init__()
        self.top_k, self.experts = top_k, experts
        self.router = torch.nn.Linear(hidden, experts, bias=False)
        self.gate_up = torch.nn.Parameter(torch.randn(experts, 2 * ffn, hidden) * hidden ** -0.5)
        self.down = torch.nn.Parameter(torch.randn(experts, hidden, ffn) * ffn ** -0.5)

    def forward(self, x):
        probs = self.router(x).softmax(-1)
        weights, index = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        with torch.no_grad():
            mask = torch.nn.functional.one_hot(index, num_classes=self.experts).permute(2, 1, 0)
            hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert in hit:
            expert = expert[0]
            k, token = torch.where(mask[expert])
            gate, up = torch.nn.functional.linear(x[token], self.gate_up[expert]).chunk(2, dim=-1)
            y = torch.nn.functional.linear(torch.nn.functional.silu(gate) * up, self.down[expert])
            out.index_add_(0, token, y * weights[token, k, None])
        return out


def step(model, x):
    out = model(x)
    (out * out).mean().backward()
    return out


def check_like_eager(model, variant, x):
    expected = step(model, x)
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    actual = step(variant, x)
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-5)
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(p.grad, g, rtol=1e-4, atol=1e-5)
    model.zero_grad(set_to_none=True)


def measure(variant, model, batches, steps):
    """Median seconds per step: wall clock, and the CPU time of this thread (what a shared machine's other jobs
    change least: waiting for a core is not counted)."""
    times, cpu_times = [], []
    for i in range(steps):
        x = batches[i % len(batches)]
        start, cpu_start = time.perf_counter(), time.thread_time()
        step(variant, x)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.thread_time() - cpu_start)
        model.zero_grad(set_to_none=True)
    return statistics.median(times), statistics.median(cpu_times)


def value_check_cost(variant, model, batches, steps, repeat=200):
    """Time thunder spends per call checking the values read from tensor data on a cache hit: at a split, finding the
    continuation of the value read and evaluating its guards (SegmentedProgram._child); for a size read inside a
    segment, evaluating its checks there (size_guards.check_read). The checks of ``steps`` calls are recorded, then
    each is made again ``repeat`` times in a loop timed as a whole by this thread's CPU time (the timer's cost spread
    over the loop)."""
    from thunder.frontend import size_guards
    from thunder.frontend.segments import SegmentedProgram

    child, check_read, lookups, guards = SegmentedProgram._child, size_guards.check_read, [], []

    def recording_child(self, node, value, values, *a):
        lookups.append((self, (node, value, list(values), *a)))  # the values read so far, as at this split
        return child(self, node, value, values, *a)

    def recording_check_read(size, expression):
        guards.append((size, expression))
        return check_read(size, expression)

    SegmentedProgram._child, size_guards.check_read = recording_child, recording_check_read
    try:
        for i in range(steps):
            step(variant, batches[i % len(batches)])
            model.zero_grad(set_to_none=True)
    finally:
        SegmentedProgram._child, size_guards.check_read = child, check_read

    def per_check_us(checks, run):
        if not checks:
            return 0.0
        best = None
        for _ in range(3):
            start = time.thread_time()  # this thread's CPU time: the other jobs of a shared machine do not count
            for a in checks:
                for _ in range(repeat):
                    run(a)
            seconds = time.thread_time() - start
            best = seconds if best is None else min(best, seconds)
        return best / (repeat * len(checks)) * 1e6

    def check(a):
        try:
            check_read(*a)
        except size_guards.ReadGuardFailed:  # a size failing its checks: the call restarted on the split segments
            pass

    per_split = per_check_us(lookups, lambda a: child(a[0], *a[1]))
    per_guard = per_check_us(guards, check)
    return {"per_split_us": round(per_split, 2), "splits_per_call": len(lookups) / steps,
            "per_size_read_inside_us": round(per_guard, 2), "sizes_read_inside_per_call": len(guards) / steps,
            "per_call_us": round((per_split * len(lookups) + per_guard * len(guards)) / steps, 1)}


def run_case(tokens, hidden, ffn, args):
    torch.manual_seed(0)
    model = EagerExpertsMoE(hidden, ffn)
    batches = {"same batch": [torch.randn(tokens, hidden)],
               "new batch": [torch.randn(tokens, hidden) for _ in range(args.batches)]}
    case = {}
    for variant_name in ("eager", "torch.compile", "thunder"):
        if variant_name == "eager":
            variant = model
        elif variant_name == "torch.compile":
            torch._dynamo.reset()
            variant = torch.compile(model)
        else:
            variant = thunder.jit(model)
        result = {}
        for stream, xs in batches.items():
            start = time.perf_counter()
            check_like_eager(model, variant, xs[0])  # also the warm-up (compilation) for this stream
            for x in xs[1:]:
                step(variant, x)  # the other batches' routings, seen once before timing
                model.zero_grad(set_to_none=True)
            first = time.perf_counter() - start
            wall, cpu = measure(variant, model, xs, args.steps)
            result[stream] = {"step_ms": round(wall * 1e3, 3), "step_cpu_ms": round(cpu * 1e3, 3),
                              "warm_up_s": round(first, 2)}
        if variant_name == "thunder":
            result["cache_misses"] = thunder.cache_misses(variant)
            result["continuations"] = thunder.compile_stats(variant).continuations
            # calls run again split at each size read: a size read inside a segment failed its checks
            result["size_restarts"] = thunder.compile_stats(variant).size_restarts
            result["segments_per_call"] = sum(1 for t in thunder.last_traces(variant)
                                              if t.provenance and "Segment " in str(t.provenance))
            result["value_check_cost_new_batch"] = value_check_cost(variant, model, batches["new batch"], args.steps)
        case[variant_name] = result
        print(tokens, hidden, variant_name, json.dumps(result), flush=True)
    for variant_name in ("torch.compile", "thunder"):
        for stream in batches:
            mine, eager = case[variant_name][stream], case["eager"][stream]
            mine["over_eager"] = round(mine["step_ms"] / eager["step_ms"], 3)
            mine["cpu_over_eager"] = round(mine["step_cpu_ms"] / eager["step_cpu_ms"], 3)
    return case


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batches", type=int, default=4, help="distinct batches of the 'new batch' stream")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    p.add_argument("--suffix", default="", help="appended to the result file's name (moe-routing-<date><suffix>.json)")
    args = p.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")  # opaque-fallback notices (topk, one_hot) and dynamo's graph-break notices
    load_before = os.getloadavg()
    results = {"settings": vars(args), "cases": {
        "8 experts, top-2, 1024 tokens, width 128, ffn 256": run_case(1024, 128, 256, args),
        "tiny: 8 experts, top-2, 16 tokens, width 8, ffn 16": run_case(16, 8, 16, args),
    }}
    results["machine"] = {"device": "cpu (1 thread)", "platform": platform.platform(), "cpus": os.cpu_count(),
                          "python": platform.python_version(), "torch": torch.__version__,
                          "thunder": thunder.__version__,
                          # other jobs of a shared machine: the 1-minute load average before and after the run
                          "load_average": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
                          "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"moe-routing-{datetime.date.today().isoformat()}{args.suffix}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
