"""Optimizer steps (Adam, AdamW, SGD with momentum) over a parameter set shaped like a small GPT (~50 tensors,
~13M parameters): eager vs thunder.jit(opt.step), for-loop and foreach implementations, one thread, steps of the two
interleaved, medians. Writes benchmarks/results/optimizer-<date>.json.

The torch executor runs each update as separate PyTorch calls plus one copy into the parameter; fusing an
update into one pass over memory is the job of a fusion executor (thunder-triton, thunder-nvfuser).
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import platform
import statistics
import time

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
    torch.set_num_threads(1)
    results = {"cases": {}}
    for name, make in OPTIMIZERS.items():
        for foreach in (False, True):
            steps = {}
            for variant in ("eager", "thunder"):
                torch.manual_seed(0)
                params = gpt_like_parameters()
                for p in params:
                    p.grad = torch.randn_like(p)
                step = make(params, foreach).step
                steps[variant] = thunder.jit(step) if variant == "thunder" else step
            start = time.perf_counter()
            steps["thunder"]()
            first_ms = (time.perf_counter() - start) * 1e3
            for _ in range(3):
                for step in steps.values():
                    step()
            # interleaved, so that load from other processes hits both alike
            samples = {v: [] for v in steps}
            cpu_samples = {v: [] for v in steps}  # process CPU time: what other processes disturb least
            for _ in range(20):
                for v, step in steps.items():
                    start, cpu = time.perf_counter(), time.process_time()
                    step()
                    samples[v].append((time.perf_counter() - start) * 1e3)
                    cpu_samples[v].append((time.process_time() - cpu) * 1e3)
            eager_ms, thunder_ms = (round(statistics.median(samples[v]), 3) for v in ("eager", "thunder"))
            eager_cpu, thunder_cpu = (statistics.median(cpu_samples[v]) for v in ("eager", "thunder"))
            n_elems = sum(p.numel() for p in params)
            key = f"{name} {'foreach' if foreach else 'for-loop'}"
            results["cases"][key] = {"tensors": len(params), "parameters": n_elems, "eager_ms": eager_ms,
                                     "thunder_ms": thunder_ms, "thunder_over_eager": round(thunder_ms / eager_ms, 3),
                                     "cpu_thunder_over_eager": round(thunder_cpu / eager_cpu, 3),
                                     "thunder_first_call_ms": round(first_ms, 1),
                                     "compiles": thunder.cache_misses(steps["thunder"])}
            print(key, json.dumps(results["cases"][key]), flush=True)
    results["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                          "torch": torch.__version__, "thunder": thunder.__version__,
                          "torch_threads": torch.get_num_threads()}
    results["date"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    out = ROOT / "benchmarks" / "results" / f"optimizer-{results['date'][:10]}.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
