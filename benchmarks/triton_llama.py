"""A litgpt Llama-style model (6 layers, d=1024, 16 heads, RMSNorm, SwiGLU, RoPE, vocabulary 32000) training
step (forward, cross-entropy loss, backward) in bfloat16 on CUDA: eager vs torch.compile (default mode) vs
thunder.jit with the Triton executor. Writes <out>/triton-llama-<date>.json. The optimizer's step is
benchmarks/triton_adam.py's.

Goals (issue 17): thunder+triton >= 1.25x eager; its first call (trace + transforms + kernel compiles) under
10 s with a cold Triton cache and under 1 s with a warm one, each measured in a fresh process; identical
layers reuse one kernel (the kernel count does not grow with the number of layers). Loss and gradients are
checked against eager before timing. Needs a CUDA device and litgpt; elsewhere it says so and exits 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import gpu_common
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 32000


def config(n_layer: int):
    import litgpt

    size = dict(n_head=16, n_embd=1024, n_query_groups=16, intermediate_size=2816) if gpu_common.DEVICE == "cuda" \
        else dict(n_head=2, n_embd=32, n_query_groups=2, intermediate_size=64)
    return litgpt.Config(block_size=2048, vocab_size=VOCAB, padded_vocab_size=VOCAB, n_layer=n_layer,
                         mlp_class_name="LLaMAMLP", norm_class_name="RMSNorm", bias=False, rotary_percentage=1.0,
                         parallel_residual=False, **size)


class WithLoss(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids, targets):
        return F.cross_entropy(self.model(ids).flatten(0, 1), targets.flatten())


def model_and_batch(n_layer: int, batch: int, seq: int):
    import litgpt

    torch.manual_seed(0)
    model = WithLoss(litgpt.GPT(config(n_layer))).to(gpu_common.DEVICE, torch.bfloat16)
    g = torch.Generator(device=gpu_common.DEVICE).manual_seed(0)
    ids = torch.randint(0, VOCAB, (batch, seq + 1), device=gpu_common.DEVICE, generator=g)
    return model, ids[:, :-1].contiguous(), ids[:, 1:].contiguous()


def variants():
    import thunder

    # thunder before torch.compile: a slow compile must not cost thunder's figure its time
    return gpu_common.compile_variants({"eager": lambda m: m,
                                        "thunder+triton": lambda m: thunder.jit(m, executors=["triton"]),
                                        "torch.compile": torch.compile})


def case(make, args, reference: dict) -> dict:
    model, ids, targets = model_and_batch(args.layers, args.batch, args.seq)
    fn = make(model)

    def step():
        model.zero_grad(set_to_none=True)
        fn(ids, targets).backward()

    start = time.perf_counter()
    loss = fn(ids, targets)
    loss.backward()
    gpu_common.synchronize()
    result = {"first_call_s": round(time.perf_counter() - start, 3)}
    grads = [p.grad.detach().clone() for p in model.parameters()]
    if not reference:
        reference.update(loss=loss.detach(), grads=grads)
    else:
        result["rel_error"] = {"loss": gpu_common.relative_error(loss, reference["loss"]),
                               "max_param_grad": max(gpu_common.relative_error(a, e)
                                                     for a, e in zip(grads, reference["grads"]))}
    del grads
    result["train_step"] = gpu_common.cuda_ms(step, args.repeat)
    result["tokens_per_s"] = round(args.batch * args.seq / (result["train_step"]["median_ms"] * 1e-3))
    return result


def first_call(args) -> dict:
    """In this (fresh) process: thunder's first call of the training step, and what the kernel cache did."""
    from thunder_triton import kernel_cache

    import thunder

    model, ids, targets = model_and_batch(args.layers, args.batch, args.seq)
    jfn = thunder.jit(model, executors=["triton"])
    start = time.perf_counter()
    jfn(ids, targets).backward()
    gpu_common.synchronize()
    seconds = time.perf_counter() - start
    regions = {}
    for getter in (thunder.last_traces, thunder.last_backward_traces):
        traces = getter(jfn)
        for b in (traces[-1].bound_symbols if traces else []):
            if b.sym.id.startswith("triton."):
                regions[b.sym.name] = regions.get(b.sym.name, 0) + 1
    return {"first_call_s": round(seconds, 3), "kernel_cache": kernel_cache.stats(),
            "region_calls": sum(regions.values()), "distinct_kernels": len(regions)}


def first_calls(args) -> dict:
    """Cold (empty Triton and thunder-triton caches) then warm first calls, each in a fresh process; and the
    distinct kernels of a 2-layer model, which a 6-layer model must not exceed (layers share kernels)."""
    found = {}
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TRITON_CACHE_DIR": os.path.join(cache, "triton"),
               "THUNDER_TRITON_CACHE_DIR": os.path.join(cache, "kernels")}
        runs = [("cold", args.layers), ("warm", args.layers), ("warm, 2 layers", 2)]
        for label, layers in runs:
            cmd = [sys.executable, __file__, "--first-call", "--layers", str(layers), "--batch", str(args.batch),
                   "--seq", str(args.seq)] + (["--smoke"] if args.smoke else [])
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
            lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
            found[label] = json.loads(lines[-1]) if proc.returncode == 0 and lines else {
                "error": f"exit {proc.returncode}", "stderr": proc.stderr[-3000:]}
            print("first call,", label, json.dumps(found[label])[:400], flush=True)
    return found


def llama_parser(doc: str):
    """The command line of the Llama training-step benchmarks (this one and nvfuser_llama.py)."""
    p = gpu_common.parser(doc)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    return p


def main() -> int:
    p = llama_parser(__doc__)
    p.add_argument("--first-call", action="store_true", help="(internal) time thunder's first call, print JSON")
    args = p.parse_args()
    if not gpu_common.setup(args):
        return 0
    if args.smoke:
        args.batch, args.seq = 2, 16
    try:
        import litgpt  # noqa: F401
    except Exception as e:  # litgpt travels to the GPU machine as a wheel without its requirements
        print(f"benchmarks/triton_llama.py needs litgpt ({type(e).__name__}: {e}); nothing measured.")
        return 0
    if args.first_call:
        print(json.dumps(first_call(args)))
        return 0
    record = {"benchmark": "litgpt Llama-style training step (forward, cross-entropy, backward), bfloat16",
              "config": {k: v for k, v in vars(args).items() if k not in ("out", "first_call")},
              "goal": {"thunder+triton over eager": ">= 1.25", "first call cold": "< 10 s", "first call warm": "< 1 s"}}
    record["first_calls"] = first_calls(args)
    gpu_common.write(args.out, "triton-llama", record)
    cases: dict = {}
    reference: dict = {}
    for name, make in variants().items():
        gpu_common.run_case(cases, name, lambda: case(make, args, reference))
        record["cases"] = cases
        gpu_common.write(args.out, "triton-llama", record)
    record["speedups"] = gpu_common.speedups(cases, "train_step")
    print("training-step speedups:", record["speedups"])
    gpu_common.write(args.out, "triton-llama", record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
