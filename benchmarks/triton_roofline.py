"""Bandwidth roofline of layer_norm, rms_norm, softmax and cross-entropy (forward) on CUDA at large sizes:
eager vs torch.compile (default mode) vs thunder.jit with the Triton executor. Writes
<out>/triton-roofline-<date>.json and prints the roofline table.

Effective bandwidth = the fewest bytes the op must move (each input read once, each output written once) over
the measured time; the ceiling is the measured device-to-device copy rate. Goal (issue 17): >= 80% of the
copy rate for thunder+triton. Each variant is checked against eager (relative norm error) before timing.
Needs a CUDA device; elsewhere it says so and exits 0.
"""

from __future__ import annotations

import sys

import gpu_common
import torch
import torch.nn.functional as F


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def rms_norm(x, w):
    return F.rms_norm(x, (x.shape[-1],), w, eps=1e-6)


def softmax(x):
    return torch.softmax(x, dim=-1)


def cross_entropy(logits, target):
    return F.cross_entropy(logits, target)


def inputs(op, rows, cols, dtype):
    g = torch.Generator(device=gpu_common.DEVICE).manual_seed(0)
    x = torch.randn(rows, cols, device=gpu_common.DEVICE, dtype=dtype, generator=g)
    w = torch.randn(cols, device=gpu_common.DEVICE, dtype=dtype, generator=g)
    item = x.element_size()
    if op is layer_norm:
        return (x, w, torch.randn(cols, device=gpu_common.DEVICE, dtype=dtype, generator=g)), 2 * x.numel() * item
    if op is rms_norm:
        return (x, w), 2 * x.numel() * item
    if op is softmax:
        return (x,), 2 * x.numel() * item
    target = torch.randint(0, cols, (rows,), device=gpu_common.DEVICE, generator=g)
    return (x, target), x.numel() * item + rows * 8 + 4


CASES = [  # (op, rows, cols, dtype)
    *[(op, 16384, 4096, torch.bfloat16) for op in (layer_norm, rms_norm, softmax)],
    *[(op, 4096, 16384, torch.bfloat16) for op in (layer_norm, rms_norm, softmax)],
    *[(op, 16384, 4096, torch.float32) for op in (layer_norm, rms_norm, softmax)],
    (cross_entropy, 16384, 8192, torch.bfloat16),
    (cross_entropy, 8192, 32000, torch.bfloat16),  # a Llama vocabulary: rows longer than one persistent block
]


def variants():
    import thunder

    # thunder before torch.compile: a slow compile must not cost thunder's figure its time
    return gpu_common.compile_variants({"eager": lambda f: f,
                                        "thunder+triton": lambda f: thunder.jit(f, executors=["triton"]),
                                        "torch.compile": torch.compile})


def main() -> int:
    p = gpu_common.parser(__doc__)
    args = p.parse_args()
    if not gpu_common.setup(args):
        return 0
    copy = gpu_common.copy_rate_gbs()
    rows_out = []
    record = {"benchmark": "effective bandwidth of normalization, softmax and cross-entropy kernels (forward)",
              "copy_rate_gbs": copy, "goal": {"thunder+triton of_copy_rate": ">= 0.8"}, "rows": rows_out}
    smoke = [(op, 8, 64, d) for op, _, _, d in CASES[:3] + CASES[-1:]]  # each op once, tiny
    for op, rows, cols, dtype in CASES if gpu_common.DEVICE == "cuda" else smoke:
        args_, nbytes = inputs(op, rows, cols, dtype)
        expected = op(*args_)
        cases: dict = {}
        for name, make in variants().items():
            def measure():
                fn = make(op)
                actual = fn(*args_)
                ms = gpu_common.cuda_ms(lambda: fn(*args_), args.repeat)
                gbs = nbytes / (ms["median_ms"] * 1e-3) / 1e9
                return {**ms, "rel_error": gpu_common.relative_error(actual, expected), "effective_gbs": round(gbs, 1),
                        "of_copy_rate": round(gbs / copy, 3)}

            gpu_common.run_case(cases, name, measure, label=f"{op.__name__} {rows}x{cols} {str(dtype)[6:]} {name}")
        rows_out.append({"op": op.__name__, "shape": [rows, cols], "dtype": str(dtype)[6:], "bytes": nbytes,
                         "cases": cases})
        gpu_common.write(args.out, "triton-roofline", record)
    print(f"\ncopy rate {copy} GB/s (read + write)")
    print(f"{'op':<14}{'shape':<13}{'dtype':<10}" + "".join(f"{v:>22}" for v in variants()))
    for r in rows_out:
        cells = [r["cases"][v] for v in variants()]
        print(f"{r['op']:<14}{'x'.join(map(str, r['shape'])):<13}{r['dtype']:<10}" + "".join(
            f"{c['of_copy_rate']:>12.0%} {c['median_ms']:>7.3f}ms" if "median_ms" in c else f"{'error':>22}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
