"""Where a training step's time goes, eager vs thunder.jit (default executors), one thread: the share of each kind of
kernel in the forward and the backward, and the per-step cost of everything that is not a kernel. Writes
benchmarks/results/step-profile-<date>[-<suffix>].json. This is the ceiling analysis of docs/performance.md: on CPU
the torch executor runs eager's kernels, so what it can save is at most the part that is not kernels.

    python benchmarks/step_profile.py [--model gpt] [--steps N] [--suffix TAG]

- ``shares``: self CPU time that torch.profiler records for ATen ops over ``--steps`` profiled steps of each
  variant (interleaved), summed by kind: ``matmul`` (mm/addmm/bmm), ``sdpa`` (the attention kernels),
  ``other kernels`` (every other ATen op: norms, activations, softmax/NLL, embedding, sums, adds, cat, addmm's copy
  of the bias), ``overhead`` (recorded non-ATen frames: thunder's autograd function, eager's engine nodes). The
  profiler reads wall time, so under load the totals grow with the load; the shares move less.
- ``cpu_ms``: median process CPU time of each phase over unprofiled interleaved steps.
- ``kernel_calls``: how many kernels each variant calls in one forward and one backward (the outermost ATen calls
  that are not views, allocations or composites), and the (op, input shapes) whose counts differ.
- ``overhead_us``: the same model shrunk until its kernels cost next to nothing (GPT: d=8, 2 heads, T=4, vocab 16;
  the same layers, so the same calls): per forward and backward, with caches warm and after 64 MB of writes (as the
  rest of a training step does to the caches).
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import pathlib
import statistics
import sys
import time
import warnings

import torch
from torch.profiler import ProfilerActivity, profile

import thunder

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "examples"))

import training_step  # noqa: E402

from nanogpt import GPT, GPTConfig  # noqa: E402

PHASES = ("forward", "backward")


def kind(key: str) -> str:
    if key in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"):
        return "matmul"
    if key.startswith("aten::"):
        return "sdpa" if "scaled_dot_product" in key else "other kernels"
    return "overhead"


def parameters_of(variant, m):
    return m.parameters() if variant == "eager" else m._model.parameters()


def shares_and_cpu(name: str, steps: int) -> dict:
    torch.manual_seed(0)
    model, batch, loss_fn = training_step.MODELS[name]()
    variants = {"eager": copy.deepcopy(model), "thunder": thunder.jit(copy.deepcopy(model))}
    opts = {v: torch.optim.AdamW(parameters_of(v, m), lr=1e-4) for v, m in variants.items()}

    def phase(v, m, p, state):
        if p == "forward":
            opts[v].zero_grad(set_to_none=True)
            state["loss"] = loss_fn(m, batch)
        else:
            state["loss"].backward()

    for _ in range(3):
        for v, m in variants.items():
            opts[v].zero_grad(set_to_none=True)
            loss_fn(m, batch).backward()
            opts[v].step()
    self_ms = {v: {p: collections.Counter() for p in PHASES} for v in variants}
    cpu = {v: {p: [] for p in PHASES} for v in variants}
    for profiled in (False, True):
        for _ in range(steps):
            for v, m in variants.items():
                state = {}
                for p in PHASES:
                    if profiled:
                        with profile(activities=[ProfilerActivity.CPU]) as prof:
                            phase(v, m, p, state)
                        for e in prof.key_averages():
                            self_ms[v][p][kind(e.key)] += e.self_cpu_time_total / 1e3 / steps
                    else:
                        start = time.process_time()
                        phase(v, m, p, state)
                        cpu[v][p].append((time.process_time() - start) * 1e3)
                opts[v].step()
    out = {}
    for v in variants:
        out[v] = {}
        for p in PHASES:
            total = sum(self_ms[v][p].values())
            out[v][p] = {"cpu_ms": round(statistics.median(cpu[v][p]), 2),
                         "profiled_ms": round(total, 2),
                         "shares": {k: round(x / total, 3) for k, x in sorted(self_ms[v][p].items())}}
    return out


# ops that make views, allocate or only dispatch to the kernels counted (composites), left out of the call lists
_NOT_KERNELS = frozenset((
    "view", "t", "transpose", "as_strided", "reshape", "_unsafe_view", "_reshape_alias", "permute", "expand",
    "detach", "split", "narrow", "slice", "select", "unsqueeze", "squeeze", "alias", "contiguous", "flatten",
    "empty", "empty_strided", "empty_like", "zeros", "zeros_like", "ones_like", "fill_", "zero_", "resize_",
    "resolve_conj", "lift_fresh", "to", "_to_copy", "linear", "matmul", "layer_norm", "scaled_dot_product_attention",
    "cross_entropy_loss", "nll_loss_nd", "nll_loss", "log_softmax", "_log_softmax", "dropout", "embedding",
    "embedding_backward", "batch_norm", "_batch_norm_impl_index", "group_norm", "max_pool2d", "conv2d",
    "convolution", "_convolution", "adaptive_avg_pool2d"))


def kernel_calls(name: str) -> dict:
    """The kernels each variant calls in one forward and one backward (outermost ATen calls, views aside), and the
    (op, shapes) whose counts differ between the two."""
    torch.manual_seed(0)
    model, batch, loss_fn = training_step.MODELS[name]()
    variants = {"eager": copy.deepcopy(model), "thunder": thunder.jit(copy.deepcopy(model))}
    for m in variants.values():
        for _ in range(2):
            loss_fn(m, batch).backward()

    def kernel(e) -> bool:
        return e.name.startswith("aten::") and e.name[6:] not in _NOT_KERNELS

    out = {}
    for p in PHASES:
        counts = {}
        for v, m in variants.items():
            loss = loss_fn(m, batch) if p == "backward" else None
            with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
                if p == "forward":
                    loss = loss_fn(m, batch)
                else:
                    loss.backward()
            if p == "forward":
                loss.backward()
            counts[v] = collections.Counter(
                f"{e.name}{e.input_shapes}" for e in prof.events()
                if kernel(e) and not (e.cpu_parent is not None and kernel(e.cpu_parent)))
        eager, thunder_ = counts["eager"], counts["thunder"]
        out[p] = {"eager": sum(eager.values()), "thunder": sum(thunder_.values()),
                  "differing (eager, thunder)": {k: [eager[k], thunder_[k]] for k in sorted(set(eager) | set(thunder_))
                                                 if eager[k] != thunder_[k]}}
    return out


def overhead_us(reps: int = 1500) -> dict:
    config = GPTConfig(vocab_size=16, block_size=4, n_layer=2, n_head=2, n_embd=8, dropout=0.0)
    torch.manual_seed(0)
    model = GPT(config)
    idx, targets = torch.randint(0, 16, (1, 4)), torch.randint(0, 16, (1, 4))
    variants = {"eager": copy.deepcopy(model), "thunder": thunder.jit(copy.deepcopy(model))}
    flush = torch.randn(16 * 1024 * 1024)  # 64 MB
    out = {}
    for cold in (False, True):
        times = {v: {p: [] for p in PHASES} for v in variants}
        for i in range(reps):
            for v, m in variants.items():
                if cold:
                    flush.mul_(1.0)
                start = time.process_time()
                loss = m(idx, targets)[1]
                forward_end = time.process_time()
                if cold:
                    flush.mul_(1.0)
                    forward_end_cold = time.process_time()
                loss.backward()
                end = time.process_time()
                if i >= 100:
                    times[v]["forward"].append((forward_end - start) * 1e6)
                    times[v]["backward"].append((end - (forward_end_cold if cold else forward_end)) * 1e6)
        out["after 64 MB written" if cold else "warm"] = {
            v: {p: round(statistics.median(xs), 1) for p, xs in t.items()} for v, t in times.items()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gpt", choices=sorted(training_step.MODELS))
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--suffix", default="")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    record = {
        "benchmark": "step_profile",
        "model": args.model,
        **training_step.run_facts(),
        "phases": shares_and_cpu(args.model, args.steps),
        "kernel_calls": kernel_calls(args.model),
    }
    if args.model == "gpt":
        record["overhead_us_shrunk_gpt"] = overhead_us()
    print(json.dumps({k: record[k] for k in record if k not in ("machine", "versions")}, indent=1))
    if args.no_write:
        return
    out = ROOT / "benchmarks" / "results" / (f"step-profile-{record['date'][:10]}"
                                             f"{'-' + args.suffix if args.suffix else ''}.json")
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
