"""A GPT-2-small-sized block (B=8, T=1024, C=768, 12 heads) forward+backward in bfloat16 on CUDA: eager vs
torch.compile (default mode) vs thunder.jit with the Triton executor. Writes <out>/triton-block-<date>.json.

Goal (issue 17): thunder+triton >= 1.3x eager and >= 1.0x torch.compile. Each variant's output and gradients
are checked against eager (relative norm error) before it is timed; first calls (trace + transform +
compiles) are timed separately with a host clock. Needs a CUDA device; elsewhere it says so and exits 0.

    python benchmarks/triton_block.py [--dtype bfloat16] [--batch 8] [--seq 1024] [--embd 768] [--heads 12]
"""

from __future__ import annotations

import sys
import time

import gpu_common
import torch
import torch.nn as nn
import torch.nn.functional as F


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


def variants():
    import thunder

    # thunder before torch.compile: a slow compile must not cost thunder's figure its time
    return gpu_common.compile_variants({"eager": lambda m: m,
                                        "thunder+triton": lambda m: thunder.jit(m, executors=["triton"]),
                                        "torch.compile": torch.compile})


def case(make, args, dtype, reference: dict) -> dict:
    """First-call time, errors against ``reference`` (filled by the first variant, eager) and timings."""
    torch.manual_seed(0)
    block = Block(args.embd, args.heads).to(gpu_common.DEVICE, dtype)
    fn = make(block)
    x = torch.randn(args.batch, args.seq, args.embd, device=gpu_common.DEVICE, dtype=dtype, requires_grad=True)
    grad = torch.randn_like(x)

    def fwd_bwd():
        fn(x).backward(grad)

    start = time.perf_counter()
    out = fn(x)
    out.backward(grad)
    gpu_common.synchronize()
    first = time.perf_counter() - start
    result = {"first_call_s": round(first, 3)}
    if not reference:
        reference.update(out=out.detach(), x_grad=x.grad.detach().clone(),
                         param_grads=[p.grad.detach().clone() for p in block.parameters()])
    else:
        result["rel_error"] = {"output": gpu_common.relative_error(out, reference["out"]),
                               "x.grad": gpu_common.relative_error(x.grad, reference["x_grad"]),
                               "max_param_grad": max(gpu_common.relative_error(p.grad, r)
                                                     for p, r in zip(block.parameters(), reference["param_grads"]))}
    x.grad = None
    block.zero_grad(set_to_none=True)
    with torch.no_grad():
        result["forward"] = gpu_common.cuda_ms(lambda: fn(x), args.repeat)
    result["forward_backward"] = gpu_common.cuda_ms(fwd_bwd, args.repeat)
    return result


def block_arguments(doc: str):
    """The command line of the block benchmarks (this one and nvfuser_block.py)."""
    p = gpu_common.parser(doc)
    p.add_argument("--dtype", default="bfloat16", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--embd", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    return p.parse_args()


def main() -> int:
    args = block_arguments(__doc__)
    if not gpu_common.setup(args):
        return 0
    if args.smoke:
        args.batch, args.seq, args.embd, args.heads = 2, 16, 32, 2
    dtype = getattr(torch, args.dtype)
    cases: dict = {}
    record = {"benchmark": "GPT-2-small-sized block forward+backward (scaled_dot_product_attention, tanh GELU)",
              "goal": {"thunder+triton over eager": ">= 1.3", "thunder+triton over torch.compile": ">= 1.0"},
              "config": {k: v for k, v in vars(args).items() if k != "out"}, "cases": cases, "speedups": {}}
    reference: dict = {}  # eager's output and gradients
    for name, make in variants().items():
        gpu_common.run_case(cases, name, lambda: case(make, args, dtype, reference))
        if name == "thunder+triton":
            cases[name]["triton_kernels"] = gpu_common.triton_kernel_stats()
        record["speedups"] = gpu_common.speedups(cases, "forward_backward")
        gpu_common.write(args.out, "triton-block", record)
    print("forward+backward speedups:", record["speedups"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
