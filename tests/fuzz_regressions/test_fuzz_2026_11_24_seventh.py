"""Kinds the slices of 2026-11-24's seventh session (branch s7-x14, seeds 520000 on) found, each fixed."""

import pytest
import torch
import torch.nn.functional as F

import thunder
from thunder.testing.fuzz.generator import generate
from thunder.testing.fuzz.runner import AGREEMENT, run_program


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_fuzz_520255_an_unused_segment_output_over_a_zero_division_leaves_no_nan(cache):
    # v0 = t0 / t1 (t1 bool: inf) is handed over to the segment after unique's size read and unused there; its zero
    # cotangent's term (0 / 0) was computed, as the sum adding it to clamp's masked gradient could not be dropped
    outcome = run_program(generate(520255, grad_fraction=0.25), cache=cache)
    assert outcome.cls in AGREEMENT, outcome.detail


def test_fuzz_530077_the_callers_update_fails_the_backward_at_gathers_saved_input():
    # after the caller's update of v1 = sigmoid(t1), eager's backward fails first at gather's node, which saved its
    # input v2 = v1[1:]; thunder's gather gradient needs no input: its node keeps v2 all the same and checks it in
    # eager's order (tests/test_saved_like_eager.py has the kind)
    outcome = run_program(generate(530077, grad_fraction=0.25), cache="constant values")
    assert outcome.cls in AGREEMENT, outcome.detail


@pytest.mark.parametrize("cache", ["constant values", "no caching"])
def test_fuzz_540201_a_backward_kernel_whose_buffer_was_dropped_allocates_its_result(cache):
    # grad fraction 1.0: the backward specialized for an unused segment output dropped silu's backward buffer (a zero
    # it no longer computes) and called silu_backward_into without out=
    outcome = run_program(generate(540201, grad_fraction=1.0), cache=cache)
    assert outcome.cls in AGREEMENT, outcome.detail


_ACTIVATIONS = {"silu": F.silu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "relu": F.relu}


@pytest.mark.parametrize("name", sorted(_ACTIVATIONS))
def test_each_backward_kernel_writing_into_a_buffer_runs_without_one(name):
    act = _ACTIVATIONS[name]

    def fn(t):  # the mask's size read splits the program; v0, live there, is an output of the first segment unused
        v0 = act(t)  # after it (its backward buffer is a zero the backward specialized for that no longer computes)
        v1 = v0[None, 1:, ...]
        v2 = torch.addmm(v1, v1, v1.t()[:, :v1.shape[1]])
        v3 = v2[v2 > 0]
        return torch.atan2(v1.float(), v3.float())

    grads, outs = [], []
    for f in (fn, thunder.jit(fn)):
        t = torch.tensor([0.7], requires_grad=True)
        out = f(t)
        out.sum().backward()
        grads.append(t.grad)
        outs.append(out)
    assert grads[0] is not None
    torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=0)
    torch.testing.assert_close(outs[1], outs[0], rtol=0, atol=0)


def test_fuzz_591771_one_of_unbinds_views_returned_by_a_segmented_program_is_one_of_several():
    # `torch.unbind(erf(t0), 0)[0]` returned by a program split at nonzero: the call's one node returned it as a plain
    # view, which the caller could update where eager refuses (the segment's own node marks it)
    outcome = run_program(generate(591771, grad_fraction=0.25), cache="constant values")
    assert outcome.cls in AGREEMENT, outcome.detail


def test_fuzz_600716_a_snapshot_of_a_merged_fill_is_scheduled_after_the_copy_that_consumes_it():
    # grad fraction 1.0: `t0[[0, 1]] = 2; t1.fill_(True); t0.fill_(True)` on bool inputs: CSE merges the two fills into
    # one value t3, the snapshot pass clones it before its copy into t1; the torch executor's chain schedule ran that
    # clone after the copy of t3 into t0 (copy_to_out_ promises t3 is not read afterwards) and the in-place copy check
    # refused the trace. A copy_to_out_ writes its value's memory too: the schedule keeps every read of it before
    outcome = run_program(generate(600716, grad_fraction=1.0), cache="constant values")
    assert outcome.cls in AGREEMENT, outcome.detail


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_fuzz_631748_a_number_a_later_trace_made_is_not_checked_by_the_prologue(cache):
    # symbolic values (the close's 10k run): the layout replay read a number the lowered trace made (reshape's view or
    # copy depends on it) and constrained it in the prologue's trace, which cannot compute it: a NameError in the
    # prologue. The sizes the call came with are pinned instead
    outcome = run_program(generate(631748, grad_fraction=0.25), cache=cache)
    assert outcome.cls in AGREEMENT, outcome.detail
