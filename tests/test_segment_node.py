"""A program split where it reads values from tensor data runs as one autograd node per call
(frontend/segment_node.py): gradients, the engine's checks (saved tensors changed in place, a second backward,
create_graph) and the gradients of gathers summed into one buffer, all as in eager."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import thunder
from thunder.frontend import segment_node


def experts(x, w, idx):
    """An experts loop: a split per expert (the count of its rows), its weights read at a 0-d index."""
    out = torch.zeros_like(x)
    for e in idx:
        rows = (x[:, 0] > e.to(x.dtype) - 2).nonzero(as_tuple=True)[0]
        out.index_add_(0, rows, torch.tanh(x[rows] @ w[e]))
    return out


def _inputs(seed=0, idx=(0, 2, 1, 3)):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(12, 4, generator=g).requires_grad_()
    w = torch.randn(4, 4, 4, generator=g).requires_grad_()
    return x, w, torch.tensor(idx)


def _copies(*args):
    return [a.detach().clone().requires_grad_(a.requires_grad) for a in args]


def _grads_like_eager(fn, jfn, args, loss=lambda out: (out * out).sum()):
    eager_args, jit_args = _copies(*args), _copies(*args)
    expected, actual = fn(*eager_args), jfn(*jit_args)
    torch.testing.assert_close(actual, expected)
    loss(expected).backward()
    loss(actual).backward()
    for a, e in zip(jit_args, eager_args):
        if e.requires_grad:
            torch.testing.assert_close(a.grad, e.grad)
    return actual


@pytest.fixture(autouse=True)
def one_node_per_call(monkeypatch):
    # the one node is off by default (segment_node.ONE_NODE_PER_CALL: wrong gradients found by the fuzzer); these
    # tests check its mechanism with it on (the regression test below turns it off again)
    monkeypatch.setattr(segment_node, "ONE_NODE_PER_CALL", True)


def test_a_call_records_one_autograd_node_whose_inputs_are_the_call_inputs():
    jfn = thunder.jit(experts)
    x, w, idx = _inputs()
    out = jfn(x, w, idx)
    assert type(out.grad_fn).__name__ == "ThunderSegmentsFunctionBackward"
    # the node's inputs are x and w themselves: no node per segment between them
    assert {type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None} == {"AccumulateGrad"}
    assert sum(1 for t in thunder.last_traces(jfn) if "Segment " in str(t.provenance)) > 4


@pytest.mark.parametrize("idx", [(0, 2, 1, 3), (1, 1, 3, 1), (2,), (3, 0)])
def test_gradients_of_each_experts_weights_are_eagers(idx):
    # an expert read twice adds both gradients into the same slice of the one buffer
    jfn = thunder.jit(experts)
    for seed in range(3):  # new data: new counts, and continuations for the new values read
        _grads_like_eager(experts, jfn, _inputs(seed, idx))


class _NewTensors(TorchDispatchMode):
    """Counts the tensors of ``shape`` that ops make anew (not written into one of their arguments)."""

    def __init__(self, shape):
        super().__init__()
        self.shape, self.count = tuple(shape), 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and tuple(out.shape) == self.shape:
            given = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
            self.count += out.untyped_storage().data_ptr() not in given
        return out


def test_the_gradient_of_the_weights_is_one_buffer_for_the_whole_call():
    # eager makes a weight-sized gradient per expert and sums them; the call's node fills one and adds each expert's
    # rows into it
    jfn = thunder.jit(experts)
    x, w, idx = _inputs()
    _grads_like_eager(experts, jfn, (x, w, idx))  # compiles; the next call is a cache hit
    counts = []
    for fn in (experts, jfn):
        x, w, _ = _inputs(1)
        out = fn(x, w, idx)
        with _NewTensors(w.shape) as made:
            (out * out).sum().backward()
        counts.append(made.count)
    assert counts[0] >= len(idx) and counts[1] == 1, counts


def test_retain_graph_and_a_second_backward_as_eager():
    jfn = thunder.jit(experts)
    x, w, idx = _inputs()
    (xe, we), (xj, wj) = _copies(x, w), _copies(x, w)
    oe, oj = experts(xe, we, idx), jfn(xj, wj, idx)
    for o in (oe, oj):
        o.sum().backward(retain_graph=True)
        o.sum().backward()
    torch.testing.assert_close(wj.grad, we.grad)
    torch.testing.assert_close(xj.grad, xe.grad)
    for o in (oe, oj):
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            o.sum().backward()


def test_a_saved_output_changed_in_place_before_backward_raises_eagers_error():
    def f(x):
        n = int((x > 0).sum())
        return (x * n).exp()  # exp saves its output for the backward

    jfn = thunder.jit(f)
    for fn in (f, jfn):
        y = fn(torch.randn(5, requires_grad=True))
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_create_graph_gives_gradients_that_refuse_a_second_differentiation():
    jfn = thunder.jit(experts)
    x, w, idx = _inputs()
    (xe, we), (xj, wj) = _copies(x, w), _copies(x, w)
    (ge,) = torch.autograd.grad(experts(xe, we, idx).sum(), [we], create_graph=True)
    (gj,) = torch.autograd.grad(jfn(xj, wj, idx).sum(), [wj], create_graph=True)
    torch.testing.assert_close(gj, ge)
    assert gj.requires_grad
    with pytest.raises(RuntimeError, match="differentiating the gradient of a jitted function"):
        gj.sum().backward()


def test_under_saved_tensor_hooks_each_segment_is_its_own_node_and_gradients_are_eagers():
    jfn = thunder.jit(experts)
    with torch.autograd.graph.save_on_cpu():
        out = _grads_like_eager(experts, jfn, _inputs())
    assert type(out.grad_fn).__name__ == "ThunderAutogradFunctionBackward"


def test_outputs_made_in_earlier_segments_inputs_returned_and_values_without_gradient():
    def f(x, y):
        a = x * 2  # made before the split, returned at the end
        n = int((x > 0).sum())
        b = (x[:n] * y[:n]).sum() * a
        return a, b, y, (a > 0).long(), x.detach() * n

    jfn = thunder.jit(f)
    for seed in range(3):
        g = torch.Generator().manual_seed(seed)
        x, y = torch.randn(6, generator=g).requires_grad_(), torch.randn(6, generator=g).requires_grad_()
        (xe, ye), (xj, yj) = _copies(x, y), _copies(x, y)
        expected, actual = f(xe, ye), jfn(xj, yj)
        assert actual[2] is yj  # an input returned is the caller's tensor
        for a, e in zip(actual, expected):
            torch.testing.assert_close(a, e)
            assert a.requires_grad == e.requires_grad
        # the loss uses some outputs only: eager's graph reaches y only through b
        (ga, gy) = torch.autograd.grad(actual[0].sum() + actual[1].sum(), [xj, yj], retain_graph=True)
        (ea, ey) = torch.autograd.grad(expected[0].sum() + expected[1].sum(), [xe, ye], retain_graph=True)
        torch.testing.assert_close(ga, ea)
        torch.testing.assert_close(gy, ey)
        for out, y in ((expected, ye), (actual, yj)):
            assert torch.autograd.grad(out[0].sum(), [y], allow_unused=True) == (None,)


def test_a_gradient_handed_on_as_it_came_is_not_written_in_place():
    # the accumulator of an experts loop: each segment's backward hands the cotangent of `out` on as the gradient of
    # the `out` before it; the caller's cotangent and every other sum stay as they were
    jfn = thunder.jit(experts)
    x, w, idx = _inputs()
    (xe, we), (xj, wj) = _copies(x, w), _copies(x, w)
    oe, oj = experts(xe, we, idx), jfn(xj, wj, idx)
    cot = torch.randn_like(oe)
    kept = cot.clone()
    oe.backward(cot)
    oj.backward(cot)
    torch.testing.assert_close(cot, kept)
    torch.testing.assert_close(wj.grad, we.grad)
    torch.testing.assert_close(xj.grad, xe.grad)


def test_views_of_a_value_an_earlier_segment_made_get_its_gradient_once():
    # views of `a` made after the split, returned with `a`: outputs of the call's node that are views of another
    def f(x):
        a = x * 2
        n = int((x > 0).sum())
        return a, a[:n], a.t()

    _grads_like_eager(f, thunder.jit(f), (torch.randn(4, 3, requires_grad=True),),
                      loss=lambda out: out[0].sum() + out[1].sum() * 2 + out[2].sum() * 3)


def test_one_cotangent_tensor_given_for_two_outputs_counts_twice():
    # each segment's backward hands the cotangent of its output on as x's gradient: the same tensor twice, which is
    # summed, not taken for a sum already made
    def f(x):
        a = x + int((x > 0).sum())
        b = x + int((a > 1).sum())
        return a, b

    jf = thunder.jit(f)
    cotangent = torch.randn(5)
    grads = []
    for fn in (f, jf):
        x = torch.randn(5, requires_grad=True)
        torch.autograd.backward(list(fn(x)), [cotangent, cotangent])
        grads.append(x.grad)
    torch.testing.assert_close(grads[1], grads[0])


_WRONG_WITH_ONE_NODE = [434987, 436063, 436086, 436868, 438602]


@pytest.mark.parametrize("seed", _WRONG_WITH_ONE_NODE)
def test_programs_whose_gradients_the_one_node_got_wrong_match_eager(seed, monkeypatch):
    monkeypatch.setattr(segment_node, "ONE_NODE_PER_CALL", False)  # the default
    from thunder.testing.fuzz.generator import generate
    from thunder.testing.fuzz.runner import AGREEMENT, run_program

    outcome = run_program(generate(seed, grad_fraction=0.25), cache="constant values")
    assert outcome.cls in AGREEMENT, outcome.detail


@pytest.mark.xfail(strict=True, reason="one node per call gets these gradients wrong (fuzz seeds above); the cause is "
                   "not found yet, so segment_node.ONE_NODE_PER_CALL is off")
@pytest.mark.parametrize("seed", _WRONG_WITH_ONE_NODE[:2])
def test_the_one_node_gets_those_gradients_right(seed):
    from thunder.testing.fuzz.generator import generate
    from thunder.testing.fuzz.runner import AGREEMENT, run_program

    outcome = run_program(generate(seed, grad_fraction=0.25), cache="constant values")
    assert outcome.cls in AGREEMENT, outcome.detail
