"""Causal attention forward and forward+backward in bfloat16 on CUDA at GPT-2-small heads (12 x 64) and Llama-7B
heads (32 x 128), T = 1024 and 4096 (8192 tokens per batch): eager F.scaled_dot_product_attention on the flash
backend, eager on PyTorch's own cuDNN backend, and thunder.jit with the cudnn executor, in one run. Writes
<out>/cudnn-sdpa-<date>.json.

Goal (issue 18): thunder+cudnn no slower than the flash backend, and faster at T = 4096. Each variant's output and
gradients are checked against the flash backend's before timing. Needs a CUDA device and the cudnn executor;
elsewhere it says so and exits 0.
"""

from __future__ import annotations

import sys
import time

import gpu_common
import torch
import torch.nn.functional as F

SHAPES = {"gpt2-small": (12, 64), "llama-7b": (32, 128)}
TOKENS = 8192


def _eager(backend):
    from torch.nn.attention import sdpa_kernel

    def attention(q, k, v):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    return attention


def _attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def variants() -> dict:
    from torch.nn.attention import SDPBackend

    import thunder

    return {"eager flash": _eager(SDPBackend.FLASH_ATTENTION), "eager cudnn": _eager(SDPBackend.CUDNN_ATTENTION),
            "thunder+cudnn": thunder.jit(_attention, executors=["cudnn"])}


def case(fn, heads, head_dim, seq, repeat, reference: dict) -> dict:
    torch.manual_seed(0)
    batch = max(1, TOKENS // seq)
    q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    grad = torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16)
    start = time.perf_counter()
    out = fn(q, k, v)
    out.backward(grad)
    torch.cuda.synchronize()
    result = {"first_call_s": round(time.perf_counter() - start, 3), "batch": batch}
    grads = [t.grad.detach().clone() for t in (q, k, v)]
    if not reference:
        reference.update(out=out.detach(), grads=grads)
    else:
        result["rel_error"] = {"output": gpu_common.relative_error(out, reference["out"]),
                               "max_grad": max(gpu_common.relative_error(a, e) for a, e in zip(grads, reference["grads"]))}
    for t in (q, k, v):
        t.grad = None
    with torch.no_grad():
        result["forward"] = gpu_common.cuda_ms(lambda: fn(q, k, v), repeat)
    result["forward_backward"] = gpu_common.cuda_ms(lambda: fn(q, k, v).backward(grad), repeat)
    return result


def main() -> int:
    p = gpu_common.parser(__doc__)
    p.add_argument("--seqs", default="1024,4096")
    args = p.parse_args()
    if not gpu_common.setup(args, executors=("cudnn",)):
        return 0
    record = {"benchmark": "causal attention forward and forward+backward, bfloat16", "tokens_per_batch": TOKENS,
              "goal": {"thunder+cudnn over eager flash": ">= 1.0, > 1.0 at T=4096"}, "cases": {}, "speedups": {}}
    for shape_name, (heads, head_dim) in SHAPES.items():
        for seq in (int(s) for s in args.seqs.split(",")):
            label = f"{shape_name} T={seq}"
            cases = record["cases"][label] = {}
            reference: dict = {}  # the flash backend's output and gradients
            for name, fn in variants().items():
                gpu_common.run_case(cases, name, lambda: case(fn, heads, head_dim, seq, args.repeat, reference),
                                    f"{label} {name}")
            for what in ("forward", "forward_backward"):
                found = gpu_common.speedups(cases, what, bases=("eager flash",))
                if found:
                    record["speedups"][f"{label} {what}"] = found["thunder+cudnn over eager flash"]
            gpu_common.write(args.out, "cudnn-sdpa", record)
    print("thunder+cudnn over eager flash:", record["speedups"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
