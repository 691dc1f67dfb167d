"""CI's slice of the differential fuzzer (thunder.testing.fuzz): fixed seeds, every cache option, thunder.jit
vs eager. A program thunder gets wrong or crashes on fails the slice; the ones known to fail today are listed in
KNOWN_FAILURES (each a strict xfail, so the entry must go once its bug is fixed) with the shrunk regression test
of their kind in tests/fuzz_regressions/. Run more with ``nox -s fuzz -- --programs N --seed S``."""

import collections

import pytest

import thunder
from thunder.testing.fuzz.generator import generate
from thunder.testing.fuzz.runner import AGREEMENT, FAILURES, run_program

SEEDS = range(0, 150)
CACHES = [c.value for c in thunder.CACHE_OPTIONS]
GRAD_FRACTION = 0.25  # as the CLI's default

# the regression test of each failure kind (tests/fuzz_regressions/<name>.py): (kind, [(seed, cache), ...])
KNOWN_FAILURES: dict = {}


KNOWN = {case: (kind, regression) for regression, (kind, cases) in KNOWN_FAILURES.items() for case in cases}


def _outcome(seed, cache):
    return run_program(generate(seed, grad_fraction=GRAD_FRACTION), cache)


@pytest.mark.parametrize("cache", CACHES)
def test_fuzz_slice(cache):
    failures, counts = [], collections.Counter()
    for seed in SEEDS:
        if (seed, cache) in KNOWN:
            continue
        outcome = _outcome(seed, cache)
        counts[outcome.cls] += 1
        if outcome.cls in FAILURES:
            failures.append(f"seed {seed}: {outcome.kind}")
    assert not failures, f"{len(failures)} new failures ({dict(counts)}):\n" + "\n".join(failures)


@pytest.mark.parametrize("seed, cache", [
    pytest.param(seed, cache, id=f"{seed}-{cache.replace(' ', '_')}",
                 marks=pytest.mark.xfail(strict=True, reason=f"{kind} (tests/fuzz_regressions/{regression}.py)"))
    for (seed, cache), (kind, regression) in sorted(KNOWN.items())])
def test_known_fuzz_failure(seed, cache):
    """Fails while the bug is there; once it passes (XPASS fails the strict xfail), remove its entry."""
    outcome = _outcome(seed, cache)
    assert outcome.cls in AGREEMENT, outcome.detail


KERNEL_SEEDS = range(0, 60)  # seed 30: a CPU flash attention on strided rows (wrong gradients until 2026-11-25)


def test_fuzz_slice_with_kernel_composites():
    """Programs that also call the composites an executor runs as one ATen kernel (``--kernels``: norms, attention,
    convolution, pooling, losses) on tensors of every layout the program makes, all their inputs requiring grad."""
    from thunder.testing.fuzz.ops import KERNEL_OPS, OPS

    failures = []
    for seed in KERNEL_SEEDS:
        outcome = run_program(generate(seed, grad_fraction=1.0, ops=OPS + KERNEL_OPS), "constant values")
        if outcome.cls in FAILURES:
            failures.append(f"seed {seed}: {outcome.kind}")
    assert not failures, "\n".join(failures)
