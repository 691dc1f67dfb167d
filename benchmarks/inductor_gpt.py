"""The CPU fusion executor on the issue-15 GPT: eager vs torch.compile vs thunder (default executors) vs thunder
with the inductor executor, side by side in one process, on one thread.

Two workloads on a 2-layer nanoGPT (d=256, 4 heads, B=4, T=128, float32): the forward under ``torch.no_grad``,
and a training step (forward, backward, eager AdamW step). Each variant has its own deep copy of the model and
optimizer; variants run interleaved round by round so load from other processes hits them alike. Reported: the
first call (tracing and compiling included; Inductor's on-disk cache is a fresh directory unless --warm-cache,
so torch.compile and thunder+inductor both compile cold), after Inductor's once-per-process start (imports and
the C++ vector-ISA probe, paid first and reported apart, as a fresh process running either compiler pays it on top
of its first call), and the median of the next ``--steps`` calls. Outputs
and losses are checked against eager. Writes benchmarks/results/inductor-gpt-<date>[-<tag>]-<cold|warm>-cache.json
(the docs show the warm run recorded last).

    python benchmarks/inductor_gpt.py [--steps N] [--warm-cache] [--tag NAME]
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
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--warm-cache", action="store_true", help="keep Inductor's usual cache directory")
    parser.add_argument("--tag", default="", help="added to the file name, to keep several runs of one day")
    args = parser.parse_args()
    if not args.warm_cache:  # before torch._inductor reads it
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="inductor_gpt_bench_")

    import torch

    import thunder

    sys.path.insert(0, str(ROOT / "examples"))
    from nanogpt import GPT, GPTConfig

    torch.set_num_threads(1)
    # Inductor's once-per-process start (its imports, the C++ vector-ISA probe: seconds of subprocesses) is paid by
    # whichever variant first uses Inductor: paid here, so that neither first call below carries it, and reported
    start = time.perf_counter()
    import torch._inductor.compile_fx  # noqa: F401
    from torch._inductor import cpu_vec_isa

    cpu_vec_isa.pick_vec_isa()
    inductor_start_s = time.perf_counter() - start
    config = GPTConfig(vocab_size=512, block_size=128, n_layer=2, n_head=4, n_embd=256, dropout=0.0)
    torch.manual_seed(0)
    base = GPT(config)
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, config.vocab_size, (4, 128), generator=g)
    targets = torch.randint(0, config.vocab_size, (4, 128), generator=g)

    wrappers = {
        "eager": lambda m: m,
        "torch.compile": lambda m: torch.compile(m),
        "thunder": lambda m: thunder.jit(m),  # the default executors (inductor is opt-in)
        "thunder+inductor": lambda m: thunder.jit(m, executors=["inductor"]),
    }

    def infer(fn, model, opt):
        with torch.no_grad():
            return fn(idx)[0]

    def train(fn, model, opt):
        opt.zero_grad(set_to_none=True)
        loss = fn(idx, targets)[1]
        loss.backward()
        opt.step()
        return loss.detach()

    results = {"device": f"cpu ({platform.processor() or platform.machine()}), torch threads: 1",
               "versions": {"python": platform.python_version(), "torch": torch.__version__,
                            "thunder": getattr(thunder, "__version__", "?")},
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "model": "nanoGPT 2 layers, d=256, 4 heads, B=4, T=128, float32",
               "inductor_cache": "warm" if args.warm_cache else "cold (fresh TORCHINDUCTOR_CACHE_DIR)",
               "steps": args.steps, "inductor_process_start_s": round(inductor_start_s, 3),
               "first_calls": "after Inductor's process start (inductor_process_start_s), which either compiler pays "
                              "once per process on top of its first call",
               "workloads": {}}
    for workload, run in (("forward (no_grad)", infer), ("training step", train)):
        variants = {}
        for name, wrap in wrappers.items():
            model = copy.deepcopy(base)
            variants[name] = {"model": model, "fn": wrap(model),
                              "opt": torch.optim.AdamW(model.parameters(), lr=1e-4), "samples": [], "cpu_samples": [],
                              "values": []}
        for name, v in variants.items():
            start = time.perf_counter()
            v["values"].append(run(v["fn"], v["model"], v["opt"]))
            v["first_s"] = time.perf_counter() - start
            print(f"{workload}: {name} first call {v['first_s']:.2f} s", flush=True)
        for _ in range(args.steps):
            for name, v in variants.items():
                start, cpu = time.perf_counter(), time.process_time()
                v["values"].append(run(v["fn"], v["model"], v["opt"]))
                v["samples"].append(time.perf_counter() - start)
                # CPU time of the process (one thread): what other processes on a shared machine disturb least
                v["cpu_samples"].append(time.process_time() - cpu)
        ref = variants["eager"]["values"]
        rows = {}
        for name, v in variants.items():
            max_diff = max(float((a - b).abs().max()) for a, b in zip(v["values"], ref))
            rows[name] = {"first_call_s": round(v["first_s"], 3),
                          "median_ms": round(1e3 * statistics.median(v["samples"]), 2),
                          "min_ms": round(1e3 * min(v["samples"]), 2),
                          "median_cpu_ms": round(1e3 * statistics.median(v["cpu_samples"]), 2),
                          "cpu_over_eager": round(statistics.median(v["cpu_samples"])
                                                  / statistics.median(variants["eager"]["cpu_samples"]), 3),
                          "max_abs_diff_vs_eager": max_diff}
        results["workloads"][workload] = rows

    for workload, rows in results["workloads"].items():
        print(f"\n{workload}\n| variant | first call (s) | median (ms) | CPU / eager's | max |diff| vs eager |\n"
              "|---|---|---|---|---|")
        for name, r in rows.items():
            print(f"| {name} | {r['first_call_s']} | {r['median_ms']} | {r['cpu_over_eager']} | "
                  f"{r['max_abs_diff_vs_eager']:.2e} |")
    cache = "warm" if args.warm_cache else "cold"
    tag = f"-{args.tag}" if args.tag else ""
    out = ROOT / "benchmarks" / "results" / f"inductor-gpt-{results['date'][:10]}{tag}-{cache}-cache.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
