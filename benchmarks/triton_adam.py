"""The Adam/AdamW step over a GPT-2-small parameter set (124M float32 parameters in 148 tensors) on CUDA:
eager (for-loop and foreach), torch.optim.AdamW(fused=True), torch.compile (default mode) and thunder.jit with
the Triton executor. Writes <out>/triton-adam-<date>.json.

Floor: a step reads parameter, gradient, exp_avg and exp_avg_sq and writes the last three back (28 bytes per
float32 parameter), at the measured device-to-device copy rate. Goal (issue 17): thunder+triton within 1.3x
of that floor and faster than AdamW(fused=True). Every variant's parameters and state after a few steps are
checked against eager's for-loop step before timing. Needs a CUDA device; elsewhere it says so and exits 0.
"""

from __future__ import annotations

import sys
import time

import gpu_common
import torch


def gpt2_small_shapes(vocab=50257, positions=1024, d=768, layers=12) -> list[tuple]:
    shapes = [(vocab, d), (positions, d)]
    for _ in range(layers):
        shapes += [(d,), (d,), (3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,), (4 * d, d), (4 * d,), (d, 4 * d), (d,)]
    return shapes + [(d,), (d,)]


def shapes() -> list[tuple]:
    return gpt2_small_shapes() if gpu_common.DEVICE == "cuda" else gpt2_small_shapes(vocab=64, positions=16, d=8, layers=2)


def parameters(seed: int = 0) -> list[torch.nn.Parameter]:
    g = torch.Generator(device=gpu_common.DEVICE).manual_seed(seed)
    params = []
    for s in shapes():
        p = torch.nn.Parameter(torch.randn(s, device=gpu_common.DEVICE, generator=g) * 0.02)
        p.grad = torch.randn(s, device=gpu_common.DEVICE, generator=g) * 1e-3
        params.append(p)
    return params


def variants(opt_cls):
    import thunder

    def jit(opt):
        return thunder.jit(opt.step, executors=["triton"])

    return gpu_common.compile_variants({
        "eager for-loop": (dict(foreach=False), lambda opt: opt.step),
        "eager foreach": (dict(foreach=True), lambda opt: opt.step),
        "eager fused": (dict(fused=True), lambda opt: opt.step),
        "thunder+triton": (dict(foreach=False), jit),
        "torch.compile": (dict(foreach=False), lambda opt: torch.compile(opt.step)),
    })


CHECK_STEPS = 3


def case(opt_cls, kwargs, make_step, repeat, reference: dict) -> dict:
    params = parameters()
    opt = opt_cls(params, lr=1e-3, weight_decay=0.01, **kwargs)
    step = make_step(opt)
    start = time.perf_counter()
    step()
    gpu_common.synchronize()
    result = {"first_call_s": round(time.perf_counter() - start, 3)}
    for _ in range(CHECK_STEPS - 1):
        step()
    state = [torch.cat([p.detach().flatten(), opt.state[p]["exp_avg"].flatten(), opt.state[p]["exp_avg_sq"].flatten()])
             for p in params]
    if not reference:
        reference["state"] = state
    else:
        result["rel_error_after_steps"] = max(gpu_common.relative_error(a, e) for a, e in zip(state, reference["state"]))
    del state
    result["step"] = gpu_common.cuda_ms(step, repeat)
    return result


def main(doc=__doc__, make_variants=variants, stem="triton-adam", executor="triton") -> int:
    """Measures every variant ``make_variants(opt_cls)`` gives (also nvfuser_adam.py's, with ``executor``)."""
    p = gpu_common.parser(doc)
    args = p.parse_args()
    if not gpu_common.setup(args, executors=(executor,)):
        return 0
    n = sum(torch.Size(s).numel() for s in shapes())
    copy = gpu_common.copy_rate_gbs()
    floor_ms = 28 * n / (copy * 1e9) * 1e3
    record = {"benchmark": "Adam/AdamW step over GPT-2-small parameters (float32)", "parameters": n,
              "tensors": len(shapes()), "copy_rate_gbs": copy, "floor_ms": round(floor_ms, 4),
              "goal": {f"thunder+{executor} over floor": "<= 1.3", f"thunder+{executor}": "faster than eager fused"},
              "optimizers": {}}
    for opt_cls in (torch.optim.Adam, torch.optim.AdamW):
        cases: dict = {}
        reference: dict = {}  # eager for-loop's parameters and state after CHECK_STEPS steps
        for name, (kwargs, make_step) in make_variants(opt_cls).items():
            gpu_common.run_case(cases, name, lambda: case(opt_cls, kwargs, make_step, args.repeat, reference))
            ms = cases[name].get("step", {}).get("median_ms")
            if ms:
                cases[name]["over_floor"] = round(ms / floor_ms, 3)
                cases[name]["effective_gbs"] = round(28 * n / (ms * 1e-3) / 1e9, 1)
            record["optimizers"][opt_cls.__name__] = cases
            gpu_common.write(args.out, stem, record)
        reference.clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
