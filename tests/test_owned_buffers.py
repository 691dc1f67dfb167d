"""Buffers the program owns are updated in place (frontend/owned_buffers.py, executors/torch_stores.py): a loop of
``out.index_add_`` over experts, split at each expert's token count, writes into one accumulator as eager does
instead of copying it once per expert; outputs, gradients and what the caller holds stay eager's."""

import pytest
import torch

import thunder
from thunder.frontend import segments

SCATTERS = {
    "index_add_": lambda out, rows, y: out.index_add_(0, rows, y),
    "index_copy_": lambda out, rows, y: out.index_copy_(0, rows, y),
    "scatter_add_": lambda out, rows, y: out.scatter_add_(0, rows[:, None].expand(-1, y.shape[1]), y),
}
IN_PLACE = {"index_add_": "torch.Tensor.index_add_(", "index_copy_": "torch.Tensor.index_copy_(",
            "scatter_add_": "torch.Tensor.scatter_add_("}
FUNCTIONAL = ("torch.index_add(", "torch.index_copy(", "torch.scatter_add(")


def _routed(scatter):
    def f(x, w, route):
        out = torch.zeros_like(x)
        for e in range(w.shape[0]):
            rows = torch.nonzero(route == e)[:, 0]  # each expert's token count is read: a split per expert
            out = scatter(out, rows, torch.tanh(x[rows] @ w[e]))
        return out

    return f


def _code(trace) -> list[str]:
    return [line.strip() for line in str(trace).splitlines() if not line.lstrip().startswith("#")]


def _segments_with(jf, text) -> list:
    """The segments whose final trace (what runs) has ``text``."""
    final = {t.fn_name: t for t in thunder.last_traces(jf) if t.fn_name.startswith("segment")}
    return [name for name, t in final.items() if any(text in line for line in _code(t))]


def _like_eager(f, jf, *args):
    eager = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    jitted = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    expected, actual = f(*eager), jf(*jitted)
    torch.testing.assert_close(actual, expected)
    g = torch.randn_like(expected)
    wants = [i for i, a in enumerate(args) if a.requires_grad]
    torch.testing.assert_close(torch.autograd.grad(actual, [jitted[i] for i in wants], g),
                               torch.autograd.grad(expected, [eager[i] for i in wants], g))
    for a, e in zip(jitted, eager):
        torch.testing.assert_close(a, e)
    return actual


@pytest.mark.parametrize("split", [True, False], ids=["split at each size", "sizes read inside"])
@pytest.mark.parametrize("name", list(SCATTERS))
def test_an_accumulator_split_per_expert_is_updated_in_place_in_each_segment(name, split, monkeypatch):
    # split at each expert's count (what a call falls back to), or the counts read inside one segment
    monkeypatch.setattr(segments, "READ_VALUES_INSIDE", not split)
    f = _routed(SCATTERS[name])
    jf = thunder.jit(f)
    x, w = torch.randn(12, 4, requires_grad=True), torch.randn(3, 4, 4, requires_grad=True)
    for route in (torch.tensor([0, 1, 2, 0, 1, 2, 2, 2, 0, 1, 0, 2]), torch.tensor([2, 2, 1, 0, 0, 0, 1, 2, 2, 0, 1, 1])):
        _like_eager(f, jf, x, w, route)
        written = _segments_with(jf, IN_PLACE[name])
        final = [t for t in thunder.last_traces(jf) if t.fn_name.startswith("segment")]
        updates = sum(1 for t in {t.fn_name: t for t in final}.values() for line in _code(t) if IN_PLACE[name] in line)
        assert (len(written), updates) == ((3, 3) if split else (1, 3)), [str(t) for t in final]
        assert not [t for f_ in FUNCTIONAL for t in _segments_with(jf, f_)]


def test_the_returned_accumulator_is_the_callers_own_tensor_to_update():
    # the last segment's node takes the buffer's history (marked dirty), so the result is no view of its input:
    # the caller's in-place update and backward behave as eager's
    f = _routed(SCATTERS["index_add_"])
    jf = thunder.jit(f)
    x, w, route = torch.randn(8, 3, requires_grad=True), torch.randn(2, 3, 3, requires_grad=True), torch.arange(8) % 2
    ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    actual, expected = jf(x, w, route), f(ex, ew, route)
    assert not actual._is_view()
    actual.mul_(3)
    expected.mul_(3)
    torch.testing.assert_close(torch.autograd.grad(actual.sum(), (x, w)), torch.autograd.grad(expected.sum(), (ex, ew)))


def test_a_chain_of_scatters_into_a_fresh_tensor_in_one_trace_is_one_buffer():
    def f(x, rows):
        out = torch.zeros(6, 3)
        out.index_add_(0, rows, x)
        out.index_add_(0, rows.flip(0), x * 2)
        out.index_add_(0, rows, x.sin())
        return out

    jf = thunder.jit(f)
    x, rows = torch.randn(4, 3), torch.tensor([0, 5, 5, 2])
    torch.testing.assert_close(jf(x, rows), f(x, rows))
    code = _code(thunder.last_traces(jf)[-1])
    assert sum(line.startswith("torch.Tensor.index_add_(") for line in code) == 3, code
    assert not any("torch.index_add(" in line for line in code), code


def test_an_accumulator_read_again_after_its_update_stays_functional():
    # ``before`` still holds the old accumulator after the update (kept by the next split's marker): the scatter
    # must not write into it
    def f(x, route):
        out = torch.zeros_like(x)
        for e in range(2):
            rows = torch.nonzero(route == e)[:, 0]
            before = out
            out = out.index_add(0, rows, x[rows] * (e + 1))
            n = int(rows.numel())  # another split, keeping ``before`` alive
            out = out + before * n
        return out

    jf = thunder.jit(f)
    x, route = torch.randn(6, 2, requires_grad=True), torch.tensor([0, 1, 1, 0, 1, 0])
    _like_eager(f, jf, x, route)
    assert _segments_with(jf, "torch.index_add(")


def test_an_accumulator_the_caller_passes_is_never_written():
    def f(acc, x, route):
        for e in range(2):
            rows = torch.nonzero(route == e)[:, 0]
            acc = acc.index_add(0, rows, x[rows])
        return acc

    jf = thunder.jit(f)
    acc, x, route = torch.randn(5, 2), torch.randn(5, 2), torch.tensor([1, 0, 0, 1, 1])
    kept = acc.clone()
    torch.testing.assert_close(jf(acc, x, route), f(acc, x, route))
    torch.testing.assert_close(acc, kept)


def test_an_input_updated_across_splits_then_an_owned_buffer_made_from_it():
    # the caller's accumulator is updated as eager updates it (not owned: the program writes its final value
    # back); the buffer computed from it afterwards is the program's own
    def f(acc, x, route):
        for e in range(3):
            rows = torch.nonzero(route == e)[:, 0]
            acc.index_add_(0, rows, x[rows].detach() * (e + 1))
        total = acc * 2
        for e in range(2):
            rows = torch.nonzero(route == e)[:, 0]
            total.index_add_(0, rows, x[rows])
        return total

    jf = thunder.jit(f)
    for route in (torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([2, 2, 2, 0, 1, 1])):
        _like_eager(f, jf, torch.randn(6, 3), torch.randn(6, 3, requires_grad=True), route)
    assert _segments_with(jf, "torch.Tensor.index_add_(")


def test_an_expert_added_under_no_grad_leaves_the_accumulators_graph_as_eager():
    # eager: the no_grad update changes the values, and gradients flow on as if it had not happened
    def f(x, w, route):
        out = torch.zeros_like(x)
        for e in range(3):
            rows = torch.nonzero(route == e)[:, 0]
            y = torch.tanh(x[rows] @ w[e])
            if e == 1:
                with torch.no_grad():
                    out.index_add_(0, rows, y)
            else:
                out.index_add_(0, rows, y)
        return out * 2

    jf = thunder.jit(f)
    for route in (torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([2, 2, 1, 0, 1, 1])):
        _like_eager(f, jf, torch.randn(6, 3, requires_grad=True), torch.randn(3, 3, 3, requires_grad=True), route)
