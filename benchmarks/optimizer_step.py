"""Optimizer steps (Adam, AdamW, SGD with momentum) over a parameter set shaped like a small GPT (~50 tensors,
~13M parameters): eager vs torch.compile(opt.step) vs thunder.jit(opt.step), for-loop and foreach implementations,
one thread, steps of the three interleaved, medians. Writes benchmarks/results/optimizer-<date>.json.

    python benchmarks/optimizer_step.py [--steps N] [--cases "Adam foreach,SGD-momentum for-loop"] [--no-compile]
                                        [--flush-cache] [--shared-state]

Each variant's tensors lie elsewhere in memory, and for these memory-bound steps that alone moved one variant's time
against another's by up to 8% on the project's CPU machine, the same way in repeated runs; --shared-state makes every
variant update the same tensors (timing only).

The torch executor runs each update as separate PyTorch calls writing into the state (out=), parameter after
parameter (a foreach step too: each parameter's tensors stay in cache along its chain of ops); fusing an update into
one pass over memory is the job of a fusion executor (thunder-triton, thunder-nvfuser, thunder-inductor).
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


def gpt_like_parameters(n_layer=4, d=448, vocab=8192):
    shapes = [(vocab, d), (256, d)]
    for _ in range(n_layer):
        shapes += [(d,), (d,), (3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,), (4 * d, d), (4 * d,), (d, 4 * d), (d,)]
    shapes += [(d,), (d,)]
    return [torch.nn.Parameter(torch.randn(s) * 0.02) for s in shapes]


OPTIMIZERS = {
    "Adam": lambda params, foreach: torch.optim.Adam(params, lr=1e-3, foreach=foreach),
    "AdamW": lambda params, foreach: torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, foreach=foreach),
    "SGD-momentum": lambda params, foreach: torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=foreach),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--out", default=None, help="the JSON file (default: benchmarks/results/optimizer-<date>.json)")
    parser.add_argument("--flush-cache", action="store_true",
                        help="write 640 MiB before each timed step (untimed), as a training step's forward and backward "
                             "evict the optimizer's state: every variant starts from a cold cache")
    parser.add_argument("--shared-state", action="store_true",
                        help="every variant updates the same tensors (parameters, gradients and eager's optimizer "
                             "state), so that where each variant's tensors happen to lie in memory does not count: "
                             "timing only, the variants' results are not kept apart")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    wanted = {c.strip() for c in args.cases.split(",") if c.strip()}
    variants = ["eager"] + ([] if args.no_compile else ["torch.compile"]) + ["thunder"]
    wraps = {"eager": lambda f: f, "torch.compile": torch.compile, "thunder": thunder.jit}
    results = {"cases": {}}
    load_before = os.getloadavg()
    for name, make in OPTIMIZERS.items():
        for foreach in (False, True):
            key = f"{name} {'foreach' if foreach else 'for-loop'}"
            if wanted and key not in wanted:
                continue
            steps, first_ms = {}, {}
            shared = None  # --shared-state: (parameters, eager's optimizer state) that every variant updates
            for variant in variants:
                torch.manual_seed(0)
                if shared is None:
                    params = gpt_like_parameters()
                    for p in params:
                        p.grad = torch.randn_like(p)
                optimizer = make(params, foreach)
                if shared is not None:
                    optimizer.state.update(shared)
                steps[variant] = wraps[variant](optimizer.step)
                start = time.perf_counter()
                steps[variant]()
                first_ms[variant] = (time.perf_counter() - start) * 1e3
                if args.shared_state and shared is None:
                    shared = optimizer.state
            for _ in range(3):
                for step in steps.values():
                    step()
            # interleaved, so that load from other processes hits all alike
            flush = torch.zeros(160 * 2**20) if args.flush_cache else None  # more than this machine's last-level cache
            samples = {v: [] for v in steps}
            cpu_samples = {v: [] for v in steps}  # process CPU time: what other processes disturb least
            for _ in range(args.steps):
                for v, step in steps.items():
                    if flush is not None:
                        flush.add_(1)
                    start, cpu = time.perf_counter(), time.process_time()
                    step()
                    samples[v].append((time.perf_counter() - start) * 1e3)
                    cpu_samples[v].append((time.process_time() - cpu) * 1e3)
            eager_ms, eager_cpu = statistics.median(samples["eager"]), statistics.median(cpu_samples["eager"])
            row = {"tensors": len(params), "parameters": sum(p.numel() for p in params)}
            for v in variants:
                ms, cpu = statistics.median(samples[v]), statistics.median(cpu_samples[v])
                row[v] = {"step_ms": round(ms, 3), "step_ms_iqr": [round(q, 3) for q in
                                                                   statistics.quantiles(samples[v], n=4)[::2]],
                          "over_eager": round(ms / eager_ms, 3), "cpu_over_eager": round(cpu / eager_cpu, 3),
                          "first_call_ms": round(first_ms[v], 1)}
            row["thunder"]["compiles"] = thunder.cache_misses(steps["thunder"])
            results["cases"][key] = row
            print(f"{key:22} " + "  ".join(f"{v} {row[v]['step_ms']:8.2f} ms ({row[v]['over_eager']:.3f}x)"
                                           for v in variants), flush=True)
    results["cache_flushed_before_each_step"] = args.flush_cache
    results["shared_state"] = args.shared_state
    results["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                          "torch": torch.__version__, "thunder": thunder.__version__,
                          "torch_threads": torch.get_num_threads(), "load_average_before": load_before,
                          "load_average_after": os.getloadavg()}
    results["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    print("load average before/after:", load_before, results["machine"]["load_average_after"])
    if args.no_write:
        return
    out = pathlib.Path(args.out) if args.out else ROOT / "benchmarks" / "results" / f"optimizer-{results['date'][:10]}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
