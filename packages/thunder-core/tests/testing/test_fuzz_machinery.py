"""The fuzzer's own parts: generation is deterministic and valid for eager, comparisons see every kind of
difference, outcomes are classified, and the shrinker keeps the failure kind while removing the rest."""

import torch

from thunder.testing.fuzz.compare import first_difference
from thunder.testing.fuzz.generator import generate, run_eager_locals
from thunder.testing.fuzz.program import Call, Program, TensorInput, default_calls
from thunder.testing.fuzz.regression import regression_test_source
from thunder.testing.fuzz.runner import (
    DATA_REFUSAL,
    EAGER_RAISES,
    MATCH,
    MISMATCH,
    _as_accurate,
    _compare_output_updates,
    _normalize_node_names,
    normalize,
    run_program,
)
from thunder.testing.fuzz.shrink import shrink


def _program(body, returns=(), dims=("A", "B"), dtype="float32"):
    return Program(seed=1, tensors=[TensorInput("t0", dims, dtype)], numbers=[],
                   variants=[{"A": 3, "B": 4, "C": 2}, {"A": 3, "B": 4, "C": 2}, {"A": 5, "B": 2, "C": 3}],
                   body=list(body), returns=list(returns))


def test_a_seed_always_gives_the_same_program_and_eager_runs_most():
    assert generate(7).source() == generate(7).source()
    ran = 0
    for seed in range(20):
        program = generate(seed)
        assert 1 <= len(program.tensors) <= 3 and len(program.body) <= 12
        try:
            for call in default_calls(len(program.variants)):
                run_eager_locals(program, call)
            ran += 1
        except Exception:  # a program may end with a statement eager rejects, on purpose
            pass
    assert ran >= 15


def test_first_difference_sees_type_shape_dtype_requires_grad_values_and_containers():
    x = torch.ones(2, 3)
    assert first_difference(x, x.clone()) is None
    assert "shape" in first_difference(x, torch.ones(3, 2))
    assert "dtype" in first_difference(x, x.double())
    assert "requires_grad" in first_difference(x, x.clone().requires_grad_())
    assert "values differ" in first_difference(x, x + 1e-3)
    assert first_difference(x, x + 1e-7) is None  # float32 tolerance
    assert "type" in first_difference(torch.Size([2]), (2,))
    assert "length" in first_difference([1, 2], [1])
    assert "value" in first_difference("torch.float32", "dtypes.float32")
    assert first_difference(float("nan"), float("nan")) is None


def test_normwise_comparison_of_gradients_allows_rounding_of_the_largest_terms():
    eager = torch.tensor([3.0, 0.0])  # the 0 is a sum of cancelling terms as large as the 3
    thunder = torch.tensor([3.0, 4e-5])
    assert "values differ" in first_difference(eager, thunder)
    assert first_difference(eager, thunder, normwise=True) is None
    assert "values differ" in first_difference(eager, torch.tensor([3.0, 1e-2]), normwise=True)


def test_a_float64_output_computed_in_float32_is_compared_with_float32_tolerance():
    # fuzz seed 265556: sigmoid of float32 values (the example executor's, through tanh) differs from eager's by an
    # ulp, then converted to float64; the program's lowest precision bounds the comparison, in containers too
    x = torch.tensor([2.5059, 4.3381], dtype=torch.float64)
    noisy = x + 4.8e-7
    assert "values differ" in first_difference((x,), (noisy,))
    assert first_difference((x,), (noisy,), tolerance_dtype=torch.float32) is None
    assert first_difference({"a": [x]}, {"a": [noisy]}, tolerance_dtype=torch.float32) is None
    assert "values differ" in first_difference((x,), (x * 1.01,), tolerance_dtype=torch.float32)
    float32_then_double = _program(["v0 = torch.sigmoid(t0 * 3).double().cumsum(-1)"], ["v0"])
    assert run_program(float32_then_double, executors=["example", "torch"]).cls == MATCH


def test_a_differing_gradient_passes_only_when_as_accurate_as_eagers_against_float64():
    # fuzz seeds 203646 (eager's gradient of t0 / t0 is rounding noise, thunder's exact) and 200690, 207711 (a
    # gradient summed over a bfloat16 tensor: eager rounds the sum to bfloat16, thunder sums in float32)
    ref = torch.tensor([1.2578, -0.4301, 3.0], dtype=torch.float64)
    eager = ref.float() + torch.tensor([6e-5, -2e-5, 0.0])
    assert _as_accurate(eager, ref.float(), ref, torch.float32)
    assert _as_accurate(eager, ref.float() + 1e-4, ref, torch.float32)  # within four times eager's own error
    # fuzz seed 339432: d/dt (t * f / t) sums terms of 1e4 that cancel: eager 1.2e-3 off, thunder 2.7e-3
    cancelling = torch.tensor([-0.6731, 1.2], dtype=torch.float64)
    assert _as_accurate(torch.tensor([-0.6719, 1.2]), torch.tensor([-0.6758, 1.2]), cancelling, torch.float32)
    assert not _as_accurate(torch.tensor([-0.6719, 1.2]), torch.tensor([-0.6801, 1.2]), cancelling, torch.float32)
    assert not _as_accurate(eager, ref.float() * 1.01, ref, torch.float32)  # a wrong gradient
    assert _as_accurate(eager, (ref * 1.002).float(), ref, torch.bfloat16)  # bfloat16 rounding
    assert not _as_accurate(eager, (ref * 1.1).float(), ref, torch.bfloat16)
    assert not _as_accurate(eager, torch.tensor([float("nan"), 0.0, 3.0]), ref, torch.bfloat16)
    assert not _as_accurate(eager, ref.float(), None, torch.float32)  # no reference: the difference stands


def test_normalize_makes_one_kind_of_differing_numbers_and_names():
    assert normalize("index 7 is out of bounds for v3 (at f.py:3: x)") == normalize("index 2 is out of bounds for v9")


def test_outcomes_match_eager_raises_and_data_dependent_refusal():
    assert run_program(_program(["v0 = t0 * 2 + G"], ["v0"]), "constant values").cls == MATCH
    assert run_program(_program(["v0 = t0 @ t0"], ["v0"]), "constant values").cls == EAGER_RAISES
    assert run_program(_program(["v0 = torch.histogram(t0.flatten(), bins=3)"], ["v0"]), "constant values").cls \
        == DATA_REFUSAL
    assert run_program(_program(["v0 = torch.nonzero(t0)"], ["v0"]), "constant values").cls == MATCH  # size read


def test_the_callers_update_of_an_output_is_compared_without_the_node_eager_names():
    # the second call multiplies the first output requiring grad by 2 in place before the backward
    assert any(c.updates_output for c in default_calls(3)) and default_calls(3, checks_inputs=False)[1].updates_output
    grad = [TensorInput("t0", ("A", "B"), "float32", requires_grad=True)]
    calls = [Call(0, 0, 0), Call(0, 1, 0, updates_output=True)]
    saved = _program(["v0 = t0.exp()"], ["v0"]).replace(tensors=grad)  # exp saves its result: eager's backward fails
    several = _program(["v0 = t0.unbind(0)[1]"], ["v0"]).replace(tensors=grad)  # eager refuses the update
    quotient = _program(["v0 = t0 / (t0 * t0 + 1)"], ["v0"]).replace(tensors=grad)  # eager saves the inputs only
    for program in (saved, several, quotient):
        assert run_program(program, "constant values", calls=calls).cls == MATCH
    x = torch.ones(2, 3, requires_grad=True)
    assert _compare_output_updates((x.unbind(0)[1],), (x.split(1)[1],)) is None  # both refused, as one message
    refused_only_by_eager = _compare_output_updates((x.unbind(0)[1],), ((x * 1)[1],))
    assert refused_only_by_eager.cls == MISMATCH and "the caller's update" in refused_only_by_eager.detail
    eager = "[torch.FloatTensor [3]], which is output 0 of ExpBackward0, is at version 1"
    assert _normalize_node_names(eager) == _normalize_node_names("[torch.FloatTensor [3]] is at version 1")
    assert _normalize_node_names("Output 0 of SplitBackward0 is a view and") == \
        _normalize_node_names("Output 1 of UnbindBackward0 is a view and")
    assert _normalize_node_names(eager) != _normalize_node_names(eager.replace("version 1", "version 2"))
    through_a_view = eager.replace("ExpBackward0", "torch::autograd::CopySlices")
    assert _normalize_node_names(through_a_view) == _normalize_node_names(eager)


def test_shrinking_keeps_the_kind_and_drops_what_does_not_matter():
    program = _program(["v0 = t0 * 2", "v1 = v0.sum(0)", "v2 = torch.histogram(t0.flatten(), bins=3)", "v3 = v1 + 1"],
                       ["v3", "v0"])
    kind = run_program(program, "constant values").kind
    small, calls = shrink(program, kind, "constant values")
    assert small.body == ["v2 = torch.histogram(t0.flatten(), bins=3)"] and small.returns == []
    assert calls == [Call(0, 0, 0)]
    assert all(v["A"] <= 2 and v["B"] <= 2 for v in small.variants)
    source = regression_test_source(small, calls, kind, "constant values")
    compile(source, "regression", "exec")  # a valid test file
    assert "xfail(strict=True" in source
