"""A program split where it reads values from tensor data runs as one autograd node per call
(frontend/segment_node.py): gradients, the engine's checks (saved tensors changed in place, a second backward,
create_graph) and the gradients of gathers summed into one buffer, all as in eager."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import thunder
from thunder.frontend import segment_node, segments


@pytest.fixture(autouse=True, params=["sizes read inside", "split at each size"])
def size_reads(request, monkeypatch):
    """Each test runs twice: with the sizes the loop only computes with read inside one segment, and split at each
    (what a call runs where a size fails the checks it was traced under)."""
    monkeypatch.setattr(segments, "READ_VALUES_INSIDE", request.param == "sizes read inside")
    return request.param


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


def test_a_call_records_one_autograd_node_whose_inputs_are_the_call_inputs(size_reads):
    jfn = thunder.jit(experts)
    x, w, idx = _inputs()
    out = jfn(x, w, idx)
    assert type(out.grad_fn).__name__ == "ThunderSegmentsFunctionBackward"
    # the node's inputs are x and w themselves: no node per segment between them
    assert {type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None} == {"AccumulateGrad"}
    count = sum(1 for t in thunder.last_traces(jfn) if "Segment " in str(t.provenance))
    # read inside: the experts' counts (the last one, 1, checked equal to 1: a size of 1 is specialized)
    assert count > 4 if size_reads == "split at each size" else count == 1


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


# Programs returning views of their inputs or passing inputs through: a view a segment makes of an input that
# requires grad (with grad mode off, as inside a node) requires grad too, without history. The call's node took it
# for one of its own inputs and gave it the gradient its maker's backward must hand on to the input (found by the
# fuzzer; right with a node per segment).
_FUZZ_SEEDS = [434987, 436063, 436086, 436868, 438602]


@pytest.fixture(params=[True, False], ids=["one node", "a node per segment"])
def one_node(request, monkeypatch):
    monkeypatch.setattr(segment_node, "ONE_NODE_PER_CALL", request.param)
    return request.param


@pytest.mark.parametrize("seed", _FUZZ_SEEDS)
def test_fuzz_programs_returning_views_of_inputs_match_eager(seed, one_node):
    from thunder.testing.fuzz.generator import generate
    from thunder.testing.fuzz.runner import AGREEMENT, run_program

    outcome = run_program(generate(seed, grad_fraction=0.25), cache="constant values")
    assert outcome.cls in AGREEMENT, outcome.detail


def _split(x):
    return int((x > 0).sum())  # a value read from tensor data: the program runs as segments


def _select_returned(x, y):
    v = x[1]
    n = _split(x)
    return v * n, v, x


def _slice_used_after_the_split(x, y):
    v = x[:, 1:]
    n = _split(v)
    return v.exp() + n, v


def _reshape_that_is_a_view(x, y):
    v = x.reshape(-1)
    v.unique()
    return v * 2, v


def _reshape_that_copies(x, y):
    v = x.t().reshape(-1)
    v.unique()
    return v * 2, v


def _chunks_and_a_mask(x, y):
    a, b = x.chunk(2, 0)
    m = x[x > 0]
    return a, b + m.sum(), m


def _expanded_and_transposed(x, y):
    v = x.unsqueeze(0).expand(2, *x.shape)
    n = _split(x)
    return v[:, :n], v.sum() * n, x.t()


def _views_of_views(x, y):
    v = x.t()[0]
    n = _split(v)
    return v[:n], v, x[0]


def _view_made_under_no_grad(x, y):
    with torch.no_grad():
        v = x[0]
    n = _split(x)
    return v * 2, v, x * n


def _view_of_a_detached_input(x, y):
    v = x.detach()[0]
    _split(x)  # the split, whose value is unused
    return v * 2 + x[0], v


def _inputs_passed_through(x, y):
    n = _split(x)
    return x, y, (x * n).sum(), y[:n]


def _a_view_of_an_input_given_to_a_later_read(x, y):
    v = y[1:]
    n = _split(v)
    w = x[n % 4]
    k = _split(w)
    return w * v[:1] * k, v, w


VIEW_PROGRAMS = [_select_returned, _slice_used_after_the_split, _reshape_that_is_a_view, _reshape_that_copies,
                 _chunks_and_a_mask, _expanded_and_transposed, _views_of_views, _view_made_under_no_grad,
                 _view_of_a_detached_input, _inputs_passed_through, _a_view_of_an_input_given_to_a_later_read]


def _view_inputs(seed, leaf):
    """(x, y) requiring grad, and the leaves their gradients go to (themselves, or the tensors they were made
    from: an input with history)."""
    g = torch.Generator().manual_seed(seed)
    leaves = [torch.randn(4, 4, generator=g).requires_grad_(), torch.randn(4, generator=g).requires_grad_()]
    return (leaves if leaf else [t * 1 for t in leaves]), leaves


def _weighted_loss(outputs, seed=7):
    g = torch.Generator().manual_seed(seed)
    return sum((o * torch.randn(o.shape, generator=g)).sum() for o in outputs if o.requires_grad)


def _aliases(outputs, args):
    """For each output, the index of the input whose memory it uses (None: its own)."""
    ptrs = [a.untyped_storage().data_ptr() for a in args]
    return [ptrs.index(p) if (p := o.untyped_storage().data_ptr()) in ptrs else None for o in outputs]


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf inputs", "inputs with history"])
@pytest.mark.parametrize("fn", VIEW_PROGRAMS, ids=lambda f: f.__name__.strip("_"))
def test_views_of_inputs_and_inputs_returned_get_eagers_gradients(fn, leaf, one_node):
    jfn = thunder.jit(fn)
    for seed in range(2):  # the second call: new data, a cache hit or a new continuation
        results = []
        for f in (fn, jfn):
            args, leaves = _view_inputs(seed, leaf)
            out = f(*args)
            _weighted_loss(out).backward()
            results.append((out, [o.requires_grad for o in out], _aliases(out, args), [t.grad for t in leaves]))
        (actual, *facts), (expected, *eager_facts) = results[1], results[0]
        torch.testing.assert_close(actual, expected)
        assert facts[:2] == eager_facts[:2]  # requires_grad of each output, the input memory it views
        torch.testing.assert_close(facts[2], eager_facts[2])
    if one_node and fn is not _views_of_views:  # the call's node made them (there: none but views of inputs)
        assert "ThunderSegmentsFunctionBackward" in {type(o.grad_fn).__name__ for o in jfn(*_view_inputs(0, leaf)[0])}


@pytest.mark.parametrize("fn", [_select_returned, _views_of_views, _inputs_passed_through],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_returned_view_of_an_input_updated_in_place_after_the_call(fn, one_node):
    # an input with history: eager records the update on the input (CopySlices), and the gradient sees it
    def update_then_loss(out):
        out[1].mul_(3)
        return _weighted_loss(out)

    grads = []
    for f in (fn, thunder.jit(fn)):
        args, leaves = _view_inputs(0, leaf=False)
        out = f(*args)
        update_then_loss(out).backward()
        grads.append(([o.detach() for o in out], [a.detach() for a in args], [t.grad for t in leaves]))
    torch.testing.assert_close(grads[1], grads[0])


@pytest.mark.parametrize("fn", [_select_returned, _views_of_views], ids=lambda f: f.__name__.strip("_"))
def test_a_returned_view_of_a_leaf_updated_in_place_raises_eagers_error(fn, one_node):
    for f in (fn, thunder.jit(fn)):
        out = f(*_view_inputs(0, leaf=True)[0])
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            out[1].add_(1)


@pytest.mark.parametrize("fn", [_select_returned, _a_view_of_an_input_given_to_a_later_read],
                         ids=lambda f: f.__name__.strip("_"))
def test_views_of_inputs_with_retain_graph_and_a_second_backward(fn, one_node):
    grads = []
    for f in (fn, thunder.jit(fn)):
        args, leaves = _view_inputs(0, leaf=False)
        out = f(*args)
        loss = _weighted_loss(out)
        loss.backward(retain_graph=True)
        loss.backward()
        grads.append(([o.detach() for o in out], [t.grad for t in leaves]))
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            loss.backward()
    torch.testing.assert_close(grads[1], grads[0])


@pytest.mark.parametrize("fn", VIEW_PROGRAMS, ids=lambda f: f.__name__.strip("_"))
def test_views_of_inputs_called_under_no_grad(fn, one_node):
    outs = []
    for f in (fn, thunder.jit(fn)):
        args, _ = _view_inputs(0, leaf=True)
        with torch.no_grad():
            out = f(*args)
        outs.append((out, [o.requires_grad for o in out], _aliases(out, args)))
    torch.testing.assert_close(outs[1][0], outs[0][0])
    assert outs[1][1:] == outs[0][1:]


@pytest.mark.parametrize("fn", [_slice_used_after_the_split, _a_view_of_an_input_given_to_a_later_read],
                         ids=lambda f: f.__name__.strip("_"))
def test_views_of_inputs_under_saved_tensor_hooks(fn, one_node):
    grads, packed = [], []
    for f in (fn, thunder.jit(fn)):
        packed.append(0)

        def pack(t):
            packed[-1] += 1
            return t

        args, leaves = _view_inputs(0, leaf=False)
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = f(*args)
        _weighted_loss(out).backward()
        grads.append(([o.detach() for o in out], [o.requires_grad for o in out], [t.grad for t in leaves]))
    torch.testing.assert_close(grads[1], grads[0])
    assert packed[0] and packed[1]  # the hooks saw the tensors saved for the backward
