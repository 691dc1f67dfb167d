"""Adam step over a parameter set shaped like a small GPT (~50 tensors, ~10M parameters): eager vs
thunder.jit(opt.step), for-loop and foreach implementations. Writes benchmarks/results/optimizer-<date>.json.

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


def time_steps_ms(step, params, n=20):
    for p in params:
        p.grad = torch.randn_like(p)
    for _ in range(3):
        step()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        step()
        samples.append((time.perf_counter() - start) * 1e3)
    return round(statistics.median(samples), 3)


def main() -> None:
    results = {"cases": {}}
    for foreach in (False, True):
        torch.manual_seed(0)
        params = gpt_like_parameters()
        opt = torch.optim.Adam(params, lr=1e-3, foreach=foreach)
        eager_ms = time_steps_ms(opt.step, params)
        torch.manual_seed(0)
        params_j = gpt_like_parameters()
        opt_j = torch.optim.Adam(params_j, lr=1e-3, foreach=foreach)
        jstep = thunder.jit(opt_j.step)
        start = time.perf_counter()
        for p in params_j:
            p.grad = torch.randn_like(p)
        jstep()
        first_ms = (time.perf_counter() - start) * 1e3
        thunder_ms = time_steps_ms(jstep, params_j)
        n_elems = sum(p.numel() for p in params)
        # floor: read param, grad, exp_avg, exp_avg_sq; write param, exp_avg, exp_avg_sq (fp32)
        bytes_moved = n_elems * 4 * 7
        key = "foreach" if foreach else "for-loop"
        results["cases"][key] = {"tensors": len(params), "parameters": n_elems, "eager_ms": eager_ms,
                                 "thunder_ms": thunder_ms, "thunder_first_call_ms": round(first_ms, 1),
                                 "bandwidth_floor_bytes": bytes_moved,
                                 "compiles": thunder.cache_misses(jstep)}
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
