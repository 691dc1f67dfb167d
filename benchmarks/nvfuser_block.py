"""The GPT-2-small-sized block of triton_block.py (B=8, T=1024, C=768, 12 heads) forward+backward in bfloat16 on
CUDA: eager vs torch.compile vs thunder.jit with the nvFuser executor (alone, and with cuDNN attention first) and
with the Triton executor, in one run. Writes <out>/nvfuser-block-<date>.json.

Each variant's output and gradients are checked against eager (relative norm error) before it is timed. Variants of
executors unavailable here are recorded with the reason. Needs a CUDA device and nvFuser; elsewhere it says so and
exits 0.

    python benchmarks/nvfuser_block.py [--dtype bfloat16] [--batch 8] [--seq 1024] [--embd 768] [--heads 12]
"""

from __future__ import annotations

import sys

import gpu_common
import torch
from triton_block import block_arguments, case


def main() -> int:
    args = block_arguments(__doc__)
    if not gpu_common.setup(args, executors=("nvfuser",)):
        return 0
    dtype = getattr(torch, args.dtype)
    cases: dict = {}
    record = {"benchmark": "GPT-2-small-sized block forward+backward (scaled_dot_product_attention, tanh GELU)",
              "config": {k: v for k, v in vars(args).items() if k != "out"}, "cases": cases, "speedups": {}}
    reference: dict = {}  # eager's output and gradients
    for name, make in gpu_common.fuser_variants("nvfuser").items():
        gpu_common.run_case(cases, name, lambda: case(make, args, dtype, reference))
        record["speedups"] = gpu_common.speedups(cases, "forward_backward")
        gpu_common.write(args.out, "nvfuser-block", record)
    print("forward+backward speedups:", record["speedups"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
