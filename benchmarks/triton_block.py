"""GPT-style block forward+backward and an Adam step on CUDA: eager vs torch.compile vs thunder.jit with the
Triton executor. Writes benchmarks/results/triton-block-<date>.json (device, versions, date, times in ms).

Needs a CUDA device and triton; elsewhere it says so and exits cleanly (status 0).

    python benchmarks/triton_block.py [--dtype bfloat16] [--batch 8] [--seq 1024] [--embd 768] [--heads 12]
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import platform
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.fc, self.proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        x = x + self.c_proj(y)
        return x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


def cuda_ms(fn, repeat: int = 20) -> float:
    """Median milliseconds of ``fn()`` measured with CUDA events, after warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end))
    return round(statistics.median(samples), 4)


def block_case(make_fn, args, dtype):
    torch.manual_seed(0)
    block = Block(args.embd, args.heads).to("cuda", dtype)
    fn = make_fn(block)
    x = torch.randn(args.batch, args.seq, args.embd, device="cuda", dtype=dtype, requires_grad=True)
    grad = torch.randn_like(x)

    def fwd_bwd():
        fn(x).backward(grad)

    with torch.no_grad():
        forward = cuda_ms(lambda: fn(x))
    return {"forward_ms": forward, "forward_backward_ms": cuda_ms(fwd_bwd)}


def adam_case(make_step, args):
    torch.manual_seed(0)
    params = [p for p in Block(args.embd, args.heads).to("cuda").parameters()]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.Adam(params, lr=1e-3, foreach=False)
    return {"adam_step_ms": cuda_ms(make_step(opt))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="bfloat16", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--embd", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("benchmarks/triton_block.py needs a CUDA device (Triton kernels run on GPUs); nothing measured.")
        return 0
    import thunder
    from thunder.extend import get_executor

    ex = get_executor("triton")
    ok, reason = (False, "thunder-triton is not installed") if ex is None else ex.availability()
    if not ok:
        print(f"the triton executor is unavailable: {reason}; nothing measured.")
        return 0
    import thunder_triton
    import triton

    dtype = getattr(torch, args.dtype)
    variants = {
        "eager": (lambda m: m, lambda opt: opt.step),
        "torch.compile": (torch.compile, lambda opt: torch.compile(opt.step)),
        "thunder+triton": (lambda m: thunder.jit(m, executors=["triton"]),
                           lambda opt: thunder.jit(opt.step, executors=["triton"])),
    }
    cases = {}
    for name, (make_fn, make_step) in variants.items():
        cases[name] = {**block_case(make_fn, args, dtype), **adam_case(make_step, args)}
        print(name, cases[name], flush=True)
    results = {
        "benchmark": "GPT-style block forward+backward and Adam(foreach=False) step",
        "config": vars(args),
        "cases": cases,
        "device": torch.cuda.get_device_name(),
        "versions": {"torch": torch.__version__, "triton": triton.__version__, "thunder_triton": thunder_triton.__version__,
                     "python": platform.python_version(), "cuda": torch.version.cuda},
        "date": datetime.date.today().isoformat(),
    }
    out = ROOT / "benchmarks" / "results" / f"triton-block-{results['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
