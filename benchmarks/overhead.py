"""Cache-hit overhead, first-call time and trace time of thunder.jit against eager and torch.compile.

Writes benchmarks/results/overhead-<date>.json with the machine, versions and date.

    nox -s benchmarks                       # everything
    nox -s benchmarks -- --no-torch-compile  # skip torch.compile (it needs a C++ compiler)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import sys
import time

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import thunder  # noqa: E402
from nanogpt import GPT, GPTConfig  # noqa: E402


def timed_us(fns: dict, *args, inner: int = 500, rounds: int = 15) -> dict:
    """Per-call microseconds of each of ``fns``, whose rounds of ``inner`` calls alternate (so that load from other
    processes hits all alike): median and best wall time, and median process CPU time (what other processes disturb
    least)."""
    for fn in fns.values():
        for _ in range(50):
            fn(*args)
    wall, cpu = {k: [] for k in fns}, {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
            for _ in range(inner):
                fn(*args)
            wall[k].append((time.perf_counter_ns() - start) / inner / 1e3)
            cpu[k].append((time.process_time_ns() - start_cpu) / inner / 1e3)
    return {k: {"median_us": round(statistics.median(wall[k]), 2), "best_us": round(min(wall[k]), 2),
                "cpu_median_us": round(statistics.median(cpu[k]), 2)} for k in fns}


def first_call_ms(make, *args) -> float:
    fn = make()
    start = time.perf_counter()
    fn(*args)
    return round((time.perf_counter() - start) * 1e3, 2)


def f(a, b):
    return (a * b + a).sin().sum(-1)


def add(a, b):
    return a + b


def cases():
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))
    return {
        "sin_sum_64x64_f32": (f, (torch.randn(64, 64), torch.randn(64, 64))),
        "add_2x2_i64": (add, (torch.tensor([[1, 2], [3, 4]]), torch.tensor([[5, 6], [7, 8]]))),
        "mlp_2layer_64_256": (mlp, (torch.randn(8, 64),)),
        # an input requiring grad: the call records one autograd node (eager: the module call and AddmmBackward)
        "linear_4x4_with_grad": (torch.nn.Linear(4, 4), (torch.randn(2, 4, requires_grad=True),)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-torch-compile", action="store_true")
    parser.add_argument("--out", default=None)
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-trace-times", action="store_true", help="leave the GPT trace times out")
    args = parser.parse_args()
    torch.set_num_threads(1)  # per-call overhead, not kernel parallelism, is what is measured

    results: dict = {"per_call": {}, "first_call_ms": {}, "trace_ms_by_layers": {}}
    load_before = os.getloadavg()
    # Default grad mode, as users call their code: the MLP's parameters require grad in every variant.
    wanted = {c.strip() for c in args.cases.split(",") if c.strip()}
    for name, (fn, inputs) in cases().items():
        if wanted and name not in wanted:
            continue
        row = timed_us({"eager": fn, "thunder": thunder.jit(fn), "thunder_symbolic": thunder.jit(fn, cache="symbolic values")},
                       *inputs, rounds=args.rounds)
        row["thunder_overhead_us"] = round(row["thunder"]["median_us"] - row["eager"]["median_us"], 2)
        row["thunder_cpu_overhead_us"] = round(row["thunder"]["cpu_median_us"] - row["eager"]["cpu_median_us"], 2)
        row["symbolic_over_constant_per_call"] = round(row["thunder_symbolic"]["median_us"] / row["thunder"]["median_us"], 3)
        first = {"thunder": first_call_ms(lambda: thunder.jit(fn), *inputs)}
        if not args.no_torch_compile:
            try:
                torch._dynamo.reset()
                first["torch.compile"] = first_call_ms(lambda: torch.compile(fn), *inputs)
                cfn = torch.compile(fn)
                row["torch.compile"] = timed_us({"torch.compile": cfn}, *inputs, rounds=args.rounds)["torch.compile"]
                row["torch.compile_overhead_us"] = round(
                    row["torch.compile"]["median_us"] - row["eager"]["median_us"], 2)
            except Exception as e:  # no compiler toolchain, etc.
                row["torch.compile"] = f"failed: {type(e).__name__}: {e}"[:300]
        results["per_call"][name] = row
        results["first_call_ms"][name] = first
        print(name, json.dumps(row), flush=True)

    with torch.no_grad():
        for n_layer in () if args.no_trace_times else (1, 2, 4, 8):
            torch.manual_seed(0)
            model = GPT(GPTConfig(n_layer=n_layer)).eval()
            idx = torch.randint(0, 256, (2, 32))
            jm = thunder.jit(model)
            jm(idx)
            stats = thunder.compile_stats(jm)
            results["trace_ms_by_layers"][n_layer] = {
                "interpretation_ms": round(stats.last_interpretation_seconds * 1e3, 1),
                "compile_total_ms": round(stats.last_compile_seconds * 1e3, 1),
            }
            print("gpt layers", n_layer, results["trace_ms_by_layers"][n_layer], flush=True)

    results["machine"] = {
        "platform": platform.platform(), "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(), "python": platform.python_version(), "torch": torch.__version__,
        "thunder": thunder.__version__, "torch_threads": torch.get_num_threads(),
        "load_average_before": load_before, "load_average_after": os.getloadavg(),
    }
    results["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    out = pathlib.Path(args.out) if args.out else ROOT / "benchmarks" / "results" / f"overhead-{results['date'][:10]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
