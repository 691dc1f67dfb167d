"""One training step (forward, backward, AdamW step) of small real models: eager vs torch.compile vs thunder.jit,
side by side in one process, on one thread. Writes benchmarks/results/training-step-<date>.json.

Models: a 2-layer nanoGPT (d=256, 4 heads, B=4, T=128), a tiny HF Llama, a tiny litgpt GPT, an MLP and a small
CNN (conv, batch norm, max/avg pooling). Each variant trains its own deep copy of the model with its own AdamW
(eager by default; with --jit-optimizer torch.compile and thunder compile ``optimizer.step`` too, as a user of each
would; optimizer_step.py measures optimizers alone); the steps of the variants are interleaved round by round so
that load from other processes hits them alike, and each variant's median is reported, with the medians of its
three phases (forward, backward, optimizer step). The first step (tracing and compiling included) is reported
apart. Losses, and the parameters after the last step, are compared with eager's. With --shared-model every variant
trains the one model (timing only), so that where each variant's copy happens to lie in memory does not count.

With --inductor a fourth variant, thunder with the ``inductor`` fusion executor (packages/thunder-inductor, which
must be installed), runs beside them.

    python benchmarks/training_step.py [--steps N] [--models gpt,llama,...] [--no-compile] [--jit-optimizer]
                                       [--inductor]
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
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

import thunder

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from nanogpt import GPT, GPTConfig  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Models: (module, batch, loss(model, batch))
# ---------------------------------------------------------------------------------------------


def gpt():
    config = GPTConfig(vocab_size=512, block_size=128, n_layer=2, n_head=4, n_embd=256, dropout=0.0)
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, config.vocab_size, (4, 128), generator=g)
    targets = torch.randint(0, config.vocab_size, (4, 128), generator=g)
    return GPT(config), (idx, targets), lambda m, b: m(*b)[1]


def llama():
    import transformers

    config = transformers.LlamaConfig(vocab_size=512, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    ids = torch.randint(0, 512, (4, 128), generator=torch.Generator().manual_seed(0))
    return (transformers.LlamaForCausalLM(config).train(), ids,
            lambda m, b: m(input_ids=b, labels=b, use_cache=False).loss)


def litgpt_model():
    from litgpt.config import Config
    from litgpt.model import GPT as LitGPT

    config = Config(name="tiny", block_size=128, vocab_size=512, padded_vocab_size=512, n_layer=2, n_head=4,
                    n_embd=256, rotary_percentage=0.25, parallel_residual=True, bias=True)
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 512, (4, 128), generator=g)
    targets = torch.randint(0, 512, (4, 128), generator=g)

    def loss(m, b):
        logits = m(b[0])
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), b[1].reshape(-1))

    return LitGPT(config), (idx, targets), loss


def mlp():
    model = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.SiLU(), nn.LayerNorm(1024),
                          nn.Linear(1024, 10))
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(128, 512, generator=g), torch.randint(0, 10, (128,), generator=g)
    return model, (x, y), lambda m, b: F.cross_entropy(m(b[0]), b[1])


def cnn():
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.AvgPool2d(2),
        nn.Conv2d(64, 64, 3, padding=1), nn.GroupNorm(8, 64), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(64, 10))
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(16, 3, 32, 32, generator=g), torch.randint(0, 10, (16,), generator=g)
    return model, (x, y), lambda m, b: F.cross_entropy(m(b[0]), b[1])


MODELS = {"gpt": gpt, "llama": llama, "litgpt": litgpt_model, "mlp": mlp, "cnn": cnn}

# ---------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------


PHASES = ("forward", "backward", "optimizer")


class Variant:
    def __init__(self, name, model, wrap, wrap_optimizer_step, opt=None):
        self.name = name
        self.model = model
        self.fn = wrap(model)
        self.opt = opt if opt is not None else torch.optim.AdamW(model.parameters(), lr=1e-4)
        self.opt_step = wrap_optimizer_step(self.opt.step)
        self.samples: list[float] = []
        self.cpu_samples: list[float] = []
        self.phase_samples: dict[str, list[float]] = {p: [] for p in PHASES}
        self.first_s = None
        self.losses: list[float] = []

    def step(self, batch, loss_fn) -> tuple[float, float, float]:
        """(wall seconds, CPU seconds of this process, loss) of one step; the wall seconds of its phases are
        appended to ``phase_samples`` (ms)."""
        start, cpu = time.perf_counter(), time.process_time()
        self.opt.zero_grad(set_to_none=True)
        loss = loss_fn(self.fn, batch)
        forward_end = time.perf_counter()
        loss.backward()
        backward_end = time.perf_counter()
        self.opt_step()
        end = time.perf_counter()
        for phase, seconds in zip(PHASES, (forward_end - start, backward_end - forward_end, end - backward_end)):
            self.phase_samples[phase].append(seconds * 1e3)
        return end - start, time.process_time() - cpu, float(loss)


def run_model(name, steps, variants_wanted, jit_optimizer=False, shared_model=False):
    torch.manual_seed(0)
    model, batch, loss_fn = MODELS[name]()
    wraps = {"eager": lambda m: m, "torch.compile": torch.compile, "thunder": thunder.jit,
             "thunder+inductor": lambda m: thunder.jit(m, executors=["inductor"])}
    # shared: every variant trains the one model with the one optimizer (timing only: each step starts from the
    # parameters the previous variant's step left, so losses and parameters are not compared)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4) if shared_model else None
    variants = [Variant(v, model if shared_model else copy.deepcopy(model), wraps[v],
                        wraps[v] if jit_optimizer else wraps["eager"], opt)
                for v in variants_wanted]
    for v in variants:  # first step: tracing and compilation
        seconds, _, loss = v.step(batch, loss_fn)
        v.first_s = seconds
        v.losses.append(loss)
    for _ in range(2):  # warm-up
        for v in variants:
            v.losses.append(v.step(batch, loss_fn)[2])
    for _ in range(steps):
        for v in variants:
            seconds, cpu, loss = v.step(batch, loss_fn)
            v.samples.append(seconds * 1e3)
            v.cpu_samples.append(cpu * 1e3)
            v.losses.append(loss)
    for v in variants:  # the first step's and the warm-up steps' phases are not timed ones
        for samples in v.phase_samples.values():
            del samples[:3]
    eager = variants[0]
    eager_params = list(eager.model.parameters())
    row = {"model": name, "parameters": sum(p.numel() for p in model.parameters())}
    for v in variants:
        # CPU time of the process (one thread) is what other processes on a shared machine disturb least
        row[v.name] = {"step_ms": round(statistics.median(v.samples), 2),
                       "step_ms_iqr": [round(q, 2) for q in statistics.quantiles(v.samples, n=4)[::2]],
                       "step_cpu_ms": round(statistics.median(v.cpu_samples), 2),
                       "first_step_s": round(v.first_s, 3),
                       "over_eager": round(statistics.median(v.samples) / statistics.median(eager.samples), 3),
                       "cpu_over_eager": round(statistics.median(v.cpu_samples) / statistics.median(eager.cpu_samples),
                                               3),
                       "max_loss_diff_vs_eager": None if shared_model else
                       max(abs(a - b) for a, b in zip(v.losses, eager.losses)),
                       "max_param_diff_vs_eager": None if shared_model else
                       max((a - b).abs().max().item() for a, b in zip(v.model.parameters(), eager_params)),
                       "phases_ms": {p: round(statistics.median(xs), 2) for p, xs in v.phase_samples.items()}}
    if "thunder" in wraps and any(v.name == "thunder" for v in variants):
        jm = next(v for v in variants if v.name == "thunder").fn
        bw = thunder.last_backward_traces(jm)[-1]
        row["thunder"]["backward_ops"] = len([b for b in bw.bound_symbols
                                              if b.sym.id not in ("python.del", "python.return")])
    return row


def run_facts() -> dict:
    """The date, machine (with its load now) and versions every record of a CPU benchmark run carries."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                    "load_average": os.getloadavg()},
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "thunder": thunder.__version__},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--jit-optimizer", action="store_true",
                        help="torch.compile and thunder compile optimizer.step too (eager keeps eager's)")
    parser.add_argument("--shared-model", action="store_true",
                        help="every variant trains the same model with the same optimizer, so that where each "
                             "variant's tensors lie in memory does not count (timing only: losses not compared)")
    parser.add_argument("--inductor", action="store_true",
                        help="add thunder with the inductor executor (thunder-inductor installed)")
    parser.add_argument("--out", default=None, help="the JSON file (default: benchmarks/results/training-step-<date>.json)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    variants = ["eager"] + ([] if args.no_compile else ["torch.compile"]) + ["thunder"] + (
        ["thunder+inductor"] if args.inductor else [])
    rows = []
    print(f"{'model':8} " + " ".join(f"{v + ' ms':>16}" for v in variants) + "   thunder/eager (wall, cpu)"
          "  first step (s)")
    for name in args.models.split(","):
        row = run_model(name, args.steps, variants, args.jit_optimizer, args.shared_model)
        rows.append(row)
        print(f"{name:8} " + " ".join(f"{row[v]['step_ms']:16.2f}" for v in variants) +
              f"   {row['thunder']['over_eager']:6.3f} {row['thunder']['cpu_over_eager']:6.3f}        " +
              (f"(+inductor {row['thunder+inductor']['over_eager']:.3f} {row['thunder+inductor']['cpu_over_eager']:.3f}) "
               if args.inductor else "") +
              " ".join(f"{row[v]['first_step_s']:.2f}" for v in variants), flush=True)
        print(" " * 9 + "phases ms (forward/backward/optimizer): " + "  ".join(
            f"{v} " + "/".join(f"{row[v]['phases_ms'][p]:.2f}" for p in PHASES) for v in variants), flush=True)
    if args.no_write:
        return
    record = {
        "benchmark": "training_step",
        "what": "forward + backward + AdamW step, median ms (wall and process CPU time) over interleaved steps; "
                "torch threads = 1",
        "optimizer_step": "compiled by each variant" if args.jit_optimizer else "eager in every variant",
        "shared_model": args.shared_model,
        **run_facts(),
        "results": rows,
    }
    out = (pathlib.Path(args.out) if args.out else
           ROOT / "benchmarks" / "results" / f"training-step-{record['date'][:10]}.json")
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
