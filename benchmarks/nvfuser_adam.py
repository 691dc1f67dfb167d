"""The Adam/AdamW step over GPT-2-small's parameters (124M float32 parameters in 148 tensors) on CUDA, as in
triton_adam.py: eager (for-loop, foreach, fused), torch.compile and thunder.jit with the nvFuser executor, whose
fusions write the parameter and the optimizer state in place (``copy_to_out_`` as outputs aliased to their inputs).
Writes <out>/nvfuser-adam-<date>.json.

Floor: 28 bytes per parameter at the measured copy rate (read parameter, gradient, exp_avg, exp_avg_sq; write the
last three). Goal (issue 19): within 1.3x of the floor; lightning-thunder's figure for its copy_to_out_ lowering was
6.0 ms against eager's 10.9 ms on its benchmark. Needs a CUDA device and nvFuser; elsewhere it says so and exits 0.
"""

from __future__ import annotations

import sys

import torch
import triton_adam


def variants(opt_cls):
    import thunder

    return {
        "eager for-loop": (dict(foreach=False), lambda opt: opt.step),
        "eager foreach": (dict(foreach=True), lambda opt: opt.step),
        "eager fused": (dict(fused=True), lambda opt: opt.step),
        "thunder+nvfuser": (dict(foreach=False), lambda opt: thunder.jit(opt.step, executors=["nvfuser"])),
        "torch.compile": (dict(foreach=False), lambda opt: torch.compile(opt.step)),
    }


if __name__ == "__main__":
    sys.exit(triton_adam.main(__doc__, variants, "nvfuser-adam", "nvfuser"))
