"""What the GPU benchmarks share: CUDA-event timing, the measured copy rate, the correctness check that runs
before any timing, and the JSON record (device, versions, date) each benchmark writes.

Timing follows .library/device/METHOD.md: device events around the region, warm-up excluded, the median
of many repeats; inputs are random (never zeros) and every variant is first checked against eager.

``--smoke`` runs a benchmark on CPU tensors at tiny sizes with Triton's interpreter (set TRITON_INTERPRET=1),
host-clock timing and no torch.compile: it checks the script, not the speed, before a GPU session spends
device time on it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import time
import traceback

import torch

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def parser(doc: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--out", default=str(RESULTS), help="folder for the JSON result (default benchmarks/results)")
    p.add_argument("--repeat", type=int, default=30, help="timed repeats per case (the median is reported)")
    p.add_argument("--smoke", action="store_true", help="check the script on CPU under TRITON_INTERPRET=1, tiny sizes")
    return p


DEVICE = "cuda"  # "cpu" under --smoke


def setup(args, executors=("triton",)) -> bool:
    """Applies --smoke; False, after saying why, where the benchmark cannot run (no CUDA device, an executor it
    measures unavailable). Only Triton has a --smoke mode (its interpreter runs on CPU)."""
    global DEVICE
    if args.smoke:
        DEVICE, args.repeat = "cpu", 2
        if executors != ("triton",):
            print(f"--smoke needs Triton's interpreter; {', '.join(executors)} run on GPUs only")
            return False
        if os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
            print("--smoke runs kernels with Triton's interpreter: set TRITON_INTERPRET=1")
            return False
    elif not torch.cuda.is_available():
        print("this benchmark needs a CUDA device; nothing measured.")
        return False
    from thunder.extend import get_executor

    for name in executors:
        ex = get_executor(name)
        ok, reason = (False, f"thunder-{name} is not installed (no '{name}' executor)") if ex is None else \
            ex.availability()
        if not ok:
            print(f"the {name} executor is unavailable: {reason}; nothing measured.")
            return False
    return True


def available(name: str) -> bool:
    """Whether the executor ``name`` is installed and can run here (variants of optional executors ask it)."""
    from thunder.extend import get_executor

    ex = get_executor(name)
    return ex is not None and ex.is_available()


def fuser_variants(fuser: str) -> dict:
    """name -> (module -> what to time): eager; thunder.jit with ``fuser``, with cuDNN attention before it and
    with Triton, where those are available; torch.compile last (a slow compile must not cost the others their
    time)."""
    import thunder

    executor_lists = {f"thunder+{fuser}": [fuser]}
    if available("cudnn"):
        executor_lists[f"thunder+cudnn+{fuser}"] = ["cudnn", fuser]
    if fuser != "triton" and available("triton"):
        executor_lists["thunder+triton"] = ["triton"]
        if available("cudnn"):
            executor_lists["thunder+cudnn+triton"] = ["cudnn", "triton"]
    found = {"eager": lambda m: m}
    found.update({name: lambda m, ex=ex: thunder.jit(m, executors=ex) for name, ex in executor_lists.items()})
    found["torch.compile"] = torch.compile
    return found


def speedups(cases: dict, metric: str, bases=("eager", "torch.compile")) -> dict:
    """'<thunder variant> over <base>' -> base time / thunder time, for the median of ``metric``."""
    found = {}
    for name, case in cases.items():
        ms = case.get(metric, {}).get("median_ms") if name.startswith("thunder") else None
        for base in bases:
            base_ms = cases.get(base, {}).get(metric, {}).get("median_ms")
            if ms and base_ms:
                found[f"{name} over {base}"] = round(base_ms / ms, 3)
    return found


def compile_variants(variants: dict) -> dict:
    """``variants`` without torch.compile under --smoke (on CPU it would time C++ builds, not check the script)."""
    return {k: v for k, v in variants.items() if DEVICE == "cuda" or k != "torch.compile"}


def synchronize() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def cuda_ms(fn, repeat: int = 30, warmup: int = 3) -> dict:
    """Median (and min, max) milliseconds of ``fn()`` measured with CUDA events, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    synchronize()
    samples = [_elapsed_ms(fn) for _ in range(repeat)]
    return {"median_ms": round(statistics.median(samples), 4), "min_ms": round(min(samples), 4),
            "max_ms": round(max(samples), 4), "repeat": repeat}


def _elapsed_ms(fn) -> float:
    if DEVICE == "cpu":  # --smoke: a host clock
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def copy_rate_gbs(nbytes: int = 1 << 30, repeat: int = 30) -> float:
    """Device-to-device copy rate in GB/s, counting bytes read plus bytes written (the bandwidth ceiling the
    roofline and the optimizer's floor are measured against)."""
    nbytes = nbytes if DEVICE == "cuda" else 1 << 20
    src = torch.randn(nbytes // 4, device=DEVICE)
    dst = torch.empty_like(src)
    ms = cuda_ms(lambda: dst.copy_(src), repeat)["median_ms"]
    return round(2 * nbytes / (ms * 1e-3) / 1e9, 1)


def relative_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """||actual - expected|| / ||expected|| in float64 (NaN when either has a NaN or an inf)."""
    a, e = actual.detach().double(), expected.detach().double()
    if not (torch.isfinite(a).all() and torch.isfinite(e).all()):
        return float("nan")
    return float((a - e).norm() / e.norm().clamp_min(1e-300))


def run_case(cases: dict, name: str, fn, label: str = "") -> None:
    """``cases[name] = fn()``, or the error (type, message, last frames) where it raises: one failing variant
    must not lose the others' figures. Prints ``label`` (default ``name``) and the result."""
    try:
        cases[name] = fn()
    except Exception as e:
        cases[name] = {"error": f"{type(e).__name__}: {e}"[:2000], "traceback": traceback.format_exc()[-3000:]}
    print(label or name, json.dumps(cases[name])[:600], flush=True)
    if DEVICE == "cuda":
        torch.cuda.empty_cache()


def versions() -> dict:
    found = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda}
    for module in ("triton", "thunder", "thunder_triton", "thunder_nvfuser", "thunder_cudnn", "cudnn", "litgpt"):
        try:
            found[module] = getattr(__import__(module), "__version__", "?")
        except Exception as e:
            found[module] = f"not importable: {type(e).__name__}"
    try:  # nvFuser's own build (imported by the executor, after the test machine's preload when there is one)
        from thunder.extend import get_executor

        found["nvfuser"] = get_executor("nvfuser").version if get_executor("nvfuser") is not None else None
    except Exception as e:
        found["nvfuser"] = f"unknown: {type(e).__name__}"
    try:
        found["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                         capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:
        found["driver"] = None
    return found


def device() -> dict:
    if DEVICE == "cpu":
        return {"name": "cpu (--smoke: Triton interpreter, not a measurement)"}
    p = torch.cuda.get_device_properties(0)
    return {"name": p.name, "capability": f"{p.major}.{p.minor}", "multiprocessors": p.multi_processor_count,
            "memory_gib": round(p.total_memory / 2**30, 1)}


def write(out: str, stem: str, record: dict) -> pathlib.Path:
    """Writes ``record`` with device, versions and date to ``<out>/<stem>-<date>.json``. Benchmarks write
    after every case, so a run stopped by its time limit keeps what it measured."""
    now = datetime.datetime.now(datetime.timezone.utc)
    record = {**record, "device": device(), "versions": versions(), "date": now.isoformat(timespec="seconds")}
    stem = stem if DEVICE == "cuda" else f"{stem}-smoke"
    path = pathlib.Path(out) / f"{stem}-{now.date().isoformat()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {path}", flush=True)
    return path


def triton_kernel_stats() -> dict:
    from thunder_triton import kernel_cache

    return kernel_cache.stats()
