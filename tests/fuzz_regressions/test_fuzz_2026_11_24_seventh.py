"""Kinds the slices of 2026-11-24's seventh session (branch s7-x14, seeds 520000 on) found, each fixed."""

import pytest

from thunder.testing.fuzz.generator import generate
from thunder.testing.fuzz.runner import AGREEMENT, run_program


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_fuzz_520255_an_unused_segment_output_over_a_zero_division_leaves_no_nan(cache):
    # v0 = t0 / t1 (t1 bool: inf) is handed over to the segment after unique's size read and unused there; its zero
    # cotangent's term (0 / 0) was computed, as the sum adding it to clamp's masked gradient could not be dropped
    outcome = run_program(generate(520255, grad_fraction=0.25), cache=cache)
    assert outcome.cls in AGREEMENT, outcome.detail
