"""Demo: jit a small GPT-style model on CPU, check it against eager, print the final trace and the
compile time and per-call time of eager vs thunder.jit."""

from __future__ import annotations

import pathlib
import sys
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import thunder  # noqa: E402
from nanogpt import GPT, GPTConfig  # noqa: E402


def per_call_us(fn, *args, repeat: int = 200) -> float:
    for _ in range(10):
        fn(*args)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e6


def main() -> None:
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=2, n_head=4, n_embd=64, block_size=64, vocab_size=256)).eval()
    idx = torch.randint(0, model.config.vocab_size, (2, 32))

    jmodel = thunder.jit(model)
    with torch.no_grad():
        start = time.perf_counter()
        out = jmodel(idx)
        compile_s = time.perf_counter() - start
        expected = model(idx)
    torch.testing.assert_close(out, expected)
    print(thunder.last_traces(jmodel)[-1])
    print()
    print(f"thunder.jit output matches eager: max abs difference {float((out - expected).abs().max()):.2e}")
    print(f"first call (interpret, trace, transform, compile, run): {compile_s * 1e3:.1f} ms")
    with torch.no_grad():
        eager_us = per_call_us(model, idx)
        jit_us = per_call_us(jmodel, idx)
    print(f"per call: eager {eager_us:.1f} us, thunder.jit {jit_us:.1f} us "
          f"(cache hits {thunder.cache_hits(jmodel)}, misses {thunder.cache_misses(jmodel)})")


if __name__ == "__main__":
    main()
