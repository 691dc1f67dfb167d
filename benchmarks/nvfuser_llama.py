"""The litgpt Llama-style training step of triton_llama.py (6 layers, d=1024, 16 heads, RMSNorm, SwiGLU, RoPE,
vocabulary 32000; forward, cross-entropy, backward) in bfloat16 on CUDA: eager vs thunder.jit with the nvFuser
executor (alone, and with cuDNN attention first) vs thunder+triton vs torch.compile, in one run. Writes
<out>/nvfuser-llama-<date>.json. Loss and gradients are checked against eager before timing. Needs a CUDA device,
nvFuser and litgpt; elsewhere it says so and exits 0.
"""

from __future__ import annotations

import sys

import gpu_common
from triton_llama import case, llama_parser


def main() -> int:
    args = llama_parser(__doc__).parse_args()
    if not gpu_common.setup(args, executors=("nvfuser",)):
        return 0
    try:
        import litgpt  # noqa: F401
    except Exception as e:  # litgpt travels to the GPU machine as a wheel without its requirements
        print(f"benchmarks/nvfuser_llama.py needs litgpt ({type(e).__name__}: {e}); nothing measured.")
        return 0
    cases: dict = {}
    record = {"benchmark": "litgpt Llama-style training step (forward, cross-entropy, backward), bfloat16",
              "config": {k: v for k, v in vars(args).items() if k != "out"}, "cases": cases, "speedups": {}}
    reference: dict = {}  # eager's loss and gradients
    for name, make in gpu_common.fuser_variants("nvfuser").items():
        gpu_common.run_case(cases, name, lambda: case(make, args, reference))
        record["speedups"] = gpu_common.speedups(cases, "train_step")
        gpu_common.write(args.out, "nvfuser-llama", record)
    print("training-step speedups:", record["speedups"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
