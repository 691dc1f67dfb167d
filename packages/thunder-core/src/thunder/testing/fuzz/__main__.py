"""``python -m thunder.testing.fuzz --programs N --seed S [--cache ...] [--executors ...]``: run the fuzzer, print
counts by outcome class per cache option and one shrunk program per failure kind; optionally write regression
tests and a JSON record."""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import platform
import signal
import sys
import time

import torch

import thunder
from thunder.testing.fuzz.generator import generate
from thunder.testing.fuzz.ops import KERNEL_OPS, OPS
from thunder.testing.fuzz.regression import write_regression_test
from thunder.testing.fuzz.runner import AGREEMENT, CLASSES, CRASH, DATA_REFUSAL, FAILURES, Outcome, run_program
from thunder.testing.fuzz.shrink import shrink


class ProgramTimeout(BaseException):
    """A BaseException, so that no ``except Exception`` in thunder or the program swallows it."""


def _on_alarm(signum, frame):
    raise ProgramTimeout()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m thunder.testing.fuzz", description=__doc__)
    parser.add_argument("--programs", type=int, default=100, help="how many programs (seeds seed .. seed+N-1)")
    parser.add_argument("--seed", type=int, default=0, help="the first program's seed")
    parser.add_argument("--cache", action="append", choices=[c.value for c in thunder.CACHE_OPTIONS],
                        help="a cache option to run under (repeatable; default: every one)")
    parser.add_argument("--executors", default=None,
                        help="comma-separated executor names in priority order (default: thunder's defaults)")
    parser.add_argument("--grad-fraction", type=float, default=0.25,
                        help="fraction of float inputs that require grad (their gradients are compared)")
    parser.add_argument("--kernels", action="store_true",
                        help="also draw the composites executors run as one kernel (norms, attention, convolution, "
                             "pooling, losses) on the program's tensors, whatever their layout")
    parser.add_argument("--max-statements", type=int, default=12)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (programs are split among them)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds per program and cache option")
    parser.add_argument("--shrink", type=int, default=1, help="shrink this many examples of each failure kind")
    parser.add_argument("--write-regressions", metavar="DIR", help="write a pytest file per shrunk failure kind")
    parser.add_argument("--include-refusals", action="store_true",
                        help="also shrink and write out refusals (not only mismatches and crashes)")
    parser.add_argument("--json", metavar="PATH", help="write counts, kinds and timing as JSON")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each failing program's outcome")
    parser.add_argument("--list-failures", action="store_true",
                        help="print every failing (seed, cache) with its kind (for a slice's KNOWN_FAILURES)")
    return parser.parse_args(argv)


def run_one(program, cache, executors, timeout: float) -> Outcome:
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return run_program(program, cache, executors)
    except ProgramTimeout:
        return Outcome(CRASH, f"timeout: more than {timeout} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _start_worker() -> None:
    torch.set_num_threads(1)
    signal.signal(signal.SIGALRM, _on_alarm)


def _generate(seed: int, args):
    return generate(seed, max_statements=args.max_statements, grad_fraction=args.grad_fraction,
                    ops=OPS + KERNEL_OPS if args.kernels else OPS)


def _outcomes_of_seed(job) -> list:
    """[(cache, outcome)] of one program under each cache option (runs in a worker process with --jobs)."""
    seed, caches, executors, args = job
    program = _generate(seed, args)
    return [(cache, run_one(program, cache, executors, args.timeout)) for cache in caches]


def main(argv=None) -> int:
    args = parse_args(argv)
    _start_worker()
    caches = args.cache or [c.value for c in thunder.CACHE_OPTIONS]
    executors = args.executors.split(",") if args.executors else None
    counts = {cache: collections.Counter() for cache in caches}
    kinds: dict = {}  # kind -> {"class", "count", "by_cache", "examples": [{"seed", "cache", "detail"}]}
    failing = []  # (seed, cache, kind) of every mismatch and crash
    start = time.perf_counter()
    seeds = range(args.seed, args.seed + args.programs)
    jobs = [(seed, caches, executors, args) for seed in seeds]
    pool = multiprocessing.Pool(args.jobs, initializer=_start_worker) if args.jobs > 1 else None
    results = pool.imap(_outcomes_of_seed, jobs, chunksize=4) if pool else map(_outcomes_of_seed, jobs)
    for done, (seed, outcomes) in enumerate(zip(seeds, results)):
        if done and done % 250 == 0:
            print(f"... {done} programs, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        for cache, outcome in outcomes:
            counts[cache][outcome.cls] += 1
            if outcome.cls in AGREEMENT:
                continue
            if outcome.cls in FAILURES:
                failing.append((seed, cache, outcome.kind))
            entry = kinds.setdefault(outcome.kind, {"class": outcome.cls, "count": 0, "by_cache": {}, "examples": []})
            entry["count"] += 1
            entry["by_cache"][cache] = entry["by_cache"].get(cache, 0) + 1
            if len(entry["examples"]) < 5:
                entry["examples"].append({"seed": seed, "cache": cache, "detail": outcome.detail[:500]})
            if args.verbose:
                print(f"seed {seed} cache={cache!r}: {outcome.kind}", flush=True)
    if pool:
        pool.close()
    elapsed = time.perf_counter() - start
    _print_counts(counts, args, elapsed)
    if args.list_failures:
        for seed, cache, kind in failing:
            print(f"    ({seed}, {cache!r}): {kind!r},")
    _shrink_kinds(kinds, args, executors)
    if args.json:
        record = {"seed": args.seed, "programs": args.programs, "caches": caches, "executors": executors,
                  "grad_fraction": args.grad_fraction, "kernels": args.kernels, "seconds": round(elapsed, 1),
                  "counts": {c: dict(n) for c, n in counts.items()}, "kinds": kinds, "failing": failing,
                  "torch": torch.__version__, "python": platform.python_version(),
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
    return 1 if failing else 0


def _print_counts(counts, args, elapsed):
    print(f"{args.programs} programs (seeds {args.seed}..{args.seed + args.programs - 1}) in {elapsed:.0f} s")
    width = max(len(c) for c in CLASSES)
    print(" " * (width + 2) + "".join(f"{c:>18}" for c in counts))
    for cls in CLASSES:
        print(f"{cls:<{width + 2}}" + "".join(f"{counts[c][cls]:>18}" for c in counts))


def _shrink_kinds(kinds, args, executors):
    for kind, entry in sorted(kinds.items(), key=lambda kv: -kv[1]["count"]):
        if entry["class"] == DATA_REFUSAL and args.include_refusals:  # another issue covers these
            continue
        print(f"\n== {entry['count']} x {kind}")
        if entry["class"] not in FAILURES and not args.include_refusals:
            print(f"   e.g. seed {entry['examples'][0]['seed']} cache={entry['examples'][0]['cache']!r}")
            continue
        for example in entry["examples"][:args.shrink]:
            program = _generate(example["seed"], args)
            small, calls = shrink(program, kind, example["cache"], executors)
            example["shrunk"] = small.source()
            example["calls"] = repr(calls)
            print(f"-- seed {example['seed']} cache={example['cache']!r}, calls {calls}\n{small.source()}")
            if args.write_regressions:
                path = write_regression_test(args.write_regressions, small, calls, kind, example["cache"], executors)
                example["regression"] = str(path)
                print(f"   written to {path}")


if __name__ == "__main__":
    sys.exit(main())
