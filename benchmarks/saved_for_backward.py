"""Bytes saved for backward by a GPT-style block (nanoGPT's Block: layer norms, causal attention, GELU MLP):
eager vs thunder.jit, measured the same way for both, through torch.autograd.graph.saved_tensors_hooks (every
tensor packed for backward, each storage counted once), and thunder's own report. Also the time of one
forward+backward. Writes benchmarks/results/saved-for-backward-<date>.json.
"""

from __future__ import annotations

import copy
import datetime
import json
import pathlib
import platform
import sys
import time

import torch

import thunder

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

from nanogpt import Block, GPTConfig  # noqa: E402


def saved_bytes(fn, x) -> tuple[int, int]:
    """(bytes of distinct storages packed for backward, number of tensors packed)."""
    storages: dict[int, int] = {}
    count = [0]

    def pack(t):
        count[0] += 1
        s = t.untyped_storage()
        storages[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(x)
    del out
    return sum(storages.values()), count[0]


def fwd_bwd_ms(fn, x, n=10) -> float:
    for _ in range(2):
        fn(x).sum().backward()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn(x).sum().backward()
        samples.append((time.perf_counter() - start) * 1e3)
    return min(samples)


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    results = []
    for (b, t, d, heads) in ((4, 128, 256, 4), (8, 256, 384, 6)):
        config = GPTConfig(n_embd=d, n_head=heads, block_size=t, dropout=0.0)
        block = Block(config)
        jblock = thunder.jit(copy.deepcopy(block))
        x = torch.randn(b, t, d, requires_grad=True)
        eager_bytes, eager_count = saved_bytes(block, x)
        thunder_bytes, thunder_count = saved_bytes(jblock, x)
        reported = thunder.compile_stats(jblock).last_saved_for_backward_bytes
        row = {
            "shape": {"batch": b, "seq": t, "n_embd": d, "n_head": heads},
            "eager_saved_bytes": eager_bytes, "eager_saved_tensors": eager_count,
            "thunder_saved_bytes": thunder_bytes, "thunder_saved_tensors": thunder_count,
            "thunder_reported_bytes": reported,
            "thunder_over_eager": round(thunder_bytes / eager_bytes, 3),
            "eager_fwd_bwd_ms": round(fwd_bwd_ms(block, x), 3),
            "thunder_fwd_bwd_ms": round(fwd_bwd_ms(jblock, x), 3),
        }
        print(json.dumps(row))
        results.append(row)
    record = {
        "benchmark": "saved_for_backward",
        "date": datetime.date.today().isoformat(),
        "device": platform.processor() or platform.machine(),
        "cpu_count": torch.get_num_threads(),
        "python": platform.python_version(), "torch": torch.__version__, "thunder": thunder.__version__,
        "results": results,
    }
    out = ROOT / "benchmarks" / "results" / f"saved-for-backward-{record['date']}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
