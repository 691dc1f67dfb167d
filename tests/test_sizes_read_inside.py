"""Sizes read from tensor data inside one segment (frontend/inner_reads.py): a size the program only computes with
is not a split; the segment checks it where it is read, and a call whose size fails those checks runs again on the
segments split at each read. Outputs, gradients and inputs as eager's (docs/values-from-tensor-data.md)."""

import pytest
import torch
from test_values_from_tensor_data import check_like_eager

import thunder
from thunder.frontend import segments


def _segments(jfn) -> list[str]:
    return [str(t.provenance) for t in thunder.last_traces(jfn) if "Segment " in str(t.provenance)]


class Experts(torch.nn.Module):
    """transformers' eager experts loop: the experts hit, a Python loop over them, ``torch.where`` of each one's
    tokens (a size per expert), ``index_add_`` back."""

    def __init__(self, hidden=8, experts=4):
        super().__init__()
        self.router = torch.nn.Linear(hidden, experts, bias=False)
        self.w = torch.nn.Parameter(torch.randn(experts, hidden, hidden) / hidden ** 0.5)
        self.experts = experts

    def forward(self, x):
        weights, index = torch.topk(self.router(x).softmax(-1), 2, dim=-1)
        out = torch.zeros_like(x)
        with torch.no_grad():
            mask = torch.nn.functional.one_hot(index, num_classes=self.experts).permute(2, 1, 0)
            hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert in hit:
            k, token = torch.where(mask[expert[0]])
            y = torch.tanh(x[token] @ self.w[expert[0]]) * weights[token, k, None]
            out.index_add_(0, token, y)
        return out


def _step_like_eager(model, jmodel, x):
    expected = model(x)
    (expected * expected).sum().backward()
    grads = [p.grad for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    actual = jmodel(x)
    (actual * actual).sum().backward()
    torch.testing.assert_close(actual, expected)
    for p, g in zip(model.parameters(), grads):
        torch.testing.assert_close(p.grad, g)
    model.zero_grad(set_to_none=True)


def test_an_experts_loop_runs_as_one_segment_like_eager():
    torch.manual_seed(0)
    model = Experts()
    jmodel = thunder.jit(model)
    for _ in range(4):  # new routing on every call: other counts per expert, the same segment
        _step_like_eager(model, jmodel, torch.randn(32, 8))
    assert len(_segments(jmodel)) == 1, _segments(jmodel)
    assert "5 values read inside" in _segments(jmodel)[0]  # the experts hit, then each one's tokens
    assert thunder.compile_stats(jmodel).size_restarts == 0
    # nonzero's size is read from its result: no count, no .item() before it
    text = str(thunder.last_traces(jmodel)[-1])
    assert "nonzero_counted" in text and "Tensor.item" not in text and "nonzero_static" not in text


def rows_sliced(x, mask):
    rows = mask.nonzero(as_tuple=True)[0]
    picked = x[rows] * 2
    return picked[:2].sum(0) + picked.sum(0)  # the slice checks the count against 2


def test_a_size_failing_its_checks_runs_the_call_again_on_the_split_segments():
    jfn = thunder.jit(rows_sliced)
    x = torch.randn(8, 3, requires_grad=True)
    counts = (5, 1, 3, 1, 0, 4)
    for n in counts:
        check_like_eager(rows_sliced, x, torch.arange(8) < n, jfn=jfn)
        # traced for 5: a count of 2 or more passes its checks; 1 and 0 are kept for the value itself, on a split
        assert len(_segments(jfn)) == (1 if n > 1 else 2)
    assert thunder.compile_stats(jfn).size_restarts == sum(1 for n in counts if n <= 1)


def test_where_most_calls_run_again_the_split_segments_run_from_then_on():
    jfn = thunder.jit(rows_sliced)
    x = torch.randn(8, 3)
    for i in range(2 * segments.MIN_RESTARTS + 6):
        check_like_eager(rows_sliced, x, torch.arange(8) < (5 if i == 0 else 1), jfn=jfn)
    assert thunder.compile_stats(jfn).size_restarts == segments.MIN_RESTARTS


def dropout_then_rows(x):
    y = torch.nn.functional.dropout(x, 0.5)
    rows = (y[:, 0] > 0).nonzero(as_tuple=True)[0]
    return y[rows].sum(0)


def add_into_input_then_rows(x, mask):
    x.add_(1)
    return x[mask.nonzero(as_tuple=True)[0]].sum(0)


def test_random_numbers_or_a_write_into_an_input_before_a_size_keep_the_split():
    # a restart would draw the numbers again, or add twice: the size is read at a split
    jfn = thunder.jit(dropout_then_rows)
    x = torch.randn(16, 3)
    for _ in range(2):
        torch.manual_seed(1)
        expected, after = dropout_then_rows(x), torch.rand(3)
        torch.manual_seed(1)
        torch.testing.assert_close(jfn(x), expected)
        torch.testing.assert_close(torch.rand(3), after)  # the generator where eager's left it
    assert len(_segments(jfn)) == 2
    jfn = check_like_eager(add_into_input_then_rows, torch.randn(8, 3), torch.arange(8) < 4)
    assert len(_segments(jfn)) == 2


def test_under_saved_tensor_hooks_the_split_segments_run():
    torch.manual_seed(0)
    model = Experts()
    jmodel = thunder.jit(model)
    packed = []

    def pack(t):
        packed.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        _step_like_eager(model, jmodel, torch.randn(32, 8))
    assert packed and len(_segments(jmodel)) > 2 and thunder.compile_stats(jmodel).size_restarts == 0


def rows_plus_three(x, mask):
    return x[mask.nonzero(as_tuple=True)[0]] + torch.ones(3, 1)


def test_an_error_after_a_size_read_inside_is_eagers():
    jfn = thunder.jit(rows_plus_three)
    x = torch.randn(8, 2)
    check_like_eager(rows_plus_three, x, torch.arange(8) < 3, jfn=jfn)
    with pytest.raises(RuntimeError) as expected:
        rows_plus_three(x, torch.arange(8) < 4)
    with pytest.raises(type(expected.value)) as actual:
        jfn(x, torch.arange(8) < 4)
    assert str(actual.value) == str(expected.value)
    assert type(actual.value) is type(expected.value)  # pytest.raises accepts a subclass


def rows_scaled_by_their_sum(x, mask):
    picked = x[mask.nonzero(as_tuple=True)[0]]
    return picked * picked.sum(1, keepdim=True) + picked  # broadcasts the count with itself only


def test_a_size_broadcast_with_itself_accepts_one():
    # broadcasting i0 with i0 asks nothing: traced for 4, a count of 1 passes without running the call again
    jfn = thunder.jit(rows_scaled_by_their_sum)
    x = torch.randn(8, 3, requires_grad=True)
    for n in (4, 1, 6):
        check_like_eager(rows_scaled_by_their_sum, x, torch.arange(8) < n, jfn=jfn)
    assert thunder.compile_stats(jfn).size_restarts == 0 and len(_segments(jfn)) == 1


def branch_on_data(x):
    y = x * 2
    if y.sum() > 0:  # a branch on data (transformers' `if expert_idx == num_experts: continue`)
        y = y + 1
    return y.sin()


def test_a_branch_on_data_is_read_inside_and_checked_equal_to_the_value_traced():
    jfn = thunder.jit(branch_on_data)
    signs = (1, 1, -1, 1, -1)
    for i, sign in enumerate(signs):
        check_like_eager(branch_on_data, (sign * torch.rand(4)).requires_grad_(), jfn=jfn)
        if i == 0:  # the read checked where it is made
            assert "_read_bool(size) == True" in str(thunder.last_traces(jfn)[-1])
        # traced for True: one segment; False fails the check inside, the call runs on the split ones
        assert len(_segments(jfn)) == (1 if sign > 0 else 2)
    assert thunder.compile_stats(jfn).size_restarts == signs.count(-1)
    assert thunder.compile_stats(jfn).continuations == 1


def first_rows(x, mask):
    n = int(mask.sum())  # an exact int: read inside, checked equal
    return x[:n].sum(0) * 2


def rows_listed(x, mask):
    return [x[i].sum() for i in mask.nonzero(as_tuple=True)[0].tolist()]  # a list: read at a split


def test_an_int_is_read_inside_and_a_list_at_a_split():
    jfn = thunder.jit(first_rows)
    x = torch.randn(8, 3, requires_grad=True)
    for n in (3, 3, 5, 3):
        check_like_eager(first_rows, x, torch.arange(8) < n, jfn=jfn)
    assert "_read_int(size) == 3" in str(thunder.last_traces(jfn)[-1]) and len(_segments(jfn)) == 1
    assert thunder.compile_stats(jfn).size_restarts == 1
    jfn = check_like_eager(rows_listed, torch.randn(8, 3), torch.arange(8) < 3)
    assert len(_segments(jfn)) == 2
