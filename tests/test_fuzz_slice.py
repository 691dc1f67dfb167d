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
KNOWN_FAILURES = {
    'test_fuzz_51_constant_values': ("mismatch: output[i]: value '(N)', eager 'torch.Size([N])'",
        [(51, 'constant values'), (51, 'symbolic values'), (51, 'no caching'), (51, 'same input'),
         (87, 'constant values'), (87, 'symbolic values'), (87, 'no caching'), (87, 'same input'),
         (106, 'constant values'), (106, 'symbolic values'), (106, 'no caching'), (106, 'same input'),
         (16, 'constant values'), (16, 'symbolic values'), (16, 'no caching'), (16, 'same input')]),
    'test_fuzz_13_constant_values': ('mismatch: LOG (side effects)[N]: type tuple, eager Size',
        [(13, 'constant values'), (13, 'symbolic values'), (13, 'no caching'), (13, 'same input'),
         (96, 'constant values'), (96, 'symbolic values'), (96, 'no caching'), (96, 'same input'),
         (132, 'constant values'), (132, 'symbolic values'), (132, 'no caching'), (132, 'same input')]),
    'test_fuzz_77_constant_values': ("mismatch: output[i]: value 'dtypes.floatN', eager 'torch.floatN'",
        [(77, 'constant values'), (77, 'symbolic values'), (77, 'no caching'), (77, 'same input'),
         (90, 'constant values'), (90, 'symbolic values'), (90, 'no caching'), (90, 'same input')]),
    'test_fuzz_85_constant_values': ('crash: UnsupportedError: the jitted function returned a tensor that is not an input and was not comp',
        [(85, 'constant values'), (85, 'no caching'), (85, 'same input'), (118, 'constant values'),
         (118, 'symbolic values'), (118, 'no caching'), (118, 'same input')]),
    # the input is updated, then the function raises (here eager's error for writing through an expanded view)
    'test_fuzz_10108_constant_values': ('mismatch: input N after the call: values differ',
        [(130, 'constant values'), (130, 'symbolic values'), (130, 'no caching'), (130, 'same input')]),
    'test_fuzz_7_constant_values': ('mismatch: backward: no exception, eager RuntimeError: one of the variables needed for gradient compu',
        [(7, 'constant values'), (7, 'symbolic values'), (7, 'no caching'), (7, 'same input')]),
    'test_fuzz_47_constant_values': ('crash: RuntimeError: where expected condition to be a boolean tensor, but got a tensor with dtype Do',
        [(47, 'constant values'), (47, 'symbolic values'), (47, 'no caching'), (47, 'same input')]),
    'test_fuzz_83_constant_values': ("crash: TypeError: sum(): argument 'input' (position N) must be Tensor, not generator",
        [(83, 'constant values'), (83, 'symbolic values'), (83, 'no caching')]),
    'test_fuzz_53_symbolic_values': ("crash: UnboundLocalError: cannot access local variable 'iN' where it is not associated with a value",
        [(53, 'symbolic values'), (55, 'symbolic values')]),
    'test_fuzz_85_symbolic_values': ('crash: TypeError: linspace() received an invalid combination of arguments - got (int, int, IntegerPr',
        [(85, 'symbolic values'), (91, 'symbolic values')]),
    'test_fuzz_97_symbolic_values': ("crash: TypeError: unsupported operand type(s) for <<: 'IntegerProxy' and 'int'",
        [(97, 'symbolic values')]),
    'test_fuzz_128_symbolic_values': ("crash: TypeError: unsupported operand type(s) for &: 'IntegerProxy' and 'int'",
        [(128, 'symbolic values')]),
    'test_fuzz_141_symbolic_values': ("crash: TypeError: unsupported operand type(s) for ^: 'IntegerProxy' and 'int'",
        [(141, 'symbolic values')]),
}


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
