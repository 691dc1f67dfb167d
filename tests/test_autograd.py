"""Autograd through traces: thunder's own forward/backward split behaves like eager autograd."""

from __future__ import annotations

import warnings

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError


def _leaves(*shapes, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g, requires_grad=True) for s in shapes]


def _clone_leaves(xs):
    return [x.detach().clone().requires_grad_(x.requires_grad) for x in xs]


def test_backward_traces_exist_and_gradients_match():
    def f(a, b):
        return (a * b + a).sin().sum(-1)

    a, b = _leaves((3, 4), (3, 4))
    ea, eb = _clone_leaves([a, b])
    jf = thunder.jit(f)
    jf(a, b).sum().backward()
    f(ea, eb).sum().backward()
    torch.testing.assert_close(a.grad, ea.grad)
    torch.testing.assert_close(b.grad, eb.grad)
    bw = thunder.last_backward_traces(jf)
    assert bw, "a call with inputs that require grad has a backward trace"
    src = str(bw[-1])
    assert src.startswith("# Constructed by") and "def backward(" in src and "torch.cos(" in src
    # the forward runs no prim the torch executor could have run as one call
    assert "torch.sin(" in str(thunder.last_traces(jf)[-1])


def test_autograd_grad_non_scalar_outputs_with_given_cotangents():
    def f(x, w):
        y = x @ w
        return y.tanh(), y.relu()

    x, w = _leaves((4, 5), (5, 3))
    ex, ew = _clone_leaves([x, w])
    g1, g2 = torch.randn(4, 3), torch.randn(4, 3)
    got = torch.autograd.grad(thunder.jit(f)(x, w), (x, w), (g1, g2))
    want = torch.autograd.grad(f(ex, ew), (ex, ew), (g1, g2))
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)


def test_only_some_outputs_used_and_integer_outputs():
    def f(x):
        values, indices = x.max(dim=-1)
        return values * 2, indices, (x > 0), x.exp()

    (x,) = _leaves((3, 4))
    (ex,) = _clone_leaves([x])
    v, i, mask, e = thunder.jit(f)(x)
    ev, ei, emask, ee = f(ex)
    assert not i.requires_grad and not mask.requires_grad and i.dtype == torch.int64 and mask.dtype == torch.bool
    torch.testing.assert_close(i, ei)
    v.sum().backward()  # the other differentiable output (exp) is not used
    ev.sum().backward()
    torch.testing.assert_close(x.grad, ex.grad)


def test_an_unused_outputs_zero_cotangent_is_not_added():
    # y is returned and used by z: its gradient is grad_y + cos(y) * grad_z. With the loss on z only, grad_y is
    # None: the backward run then is one specialized for it, without that add (eager's engine never runs it),
    # and the gradients are eager's, also when the other output's cotangent comes later (retain_graph).
    def f(x, w):
        y = x * w
        return y.sin(), y

    x, w = _leaves((4, 5), (4, 5))
    ex, ew = _clone_leaves([x, w])
    jf = thunder.jit(f)
    z, y = jf(x, w)
    ez, ey = f(ex, ew)
    z.sum().backward(retain_graph=True)
    ez.sum().backward(retain_graph=True)
    torch.testing.assert_close((x.grad, w.grad), (ex.grad, ew.grad))
    specialized = z.grad_fn._forward_cls.compiled.specialized
    assert len(specialized) == 1
    (run, zeros), = specialized.values()
    assert run is not z.grad_fn._forward_cls.compiled.backward_from_list and not zeros
    (y * 3).sum().backward()  # now the other output's cotangent exists: the full backward
    (ey * 3).sum().backward()
    torch.testing.assert_close((x.grad, w.grad), (ex.grad, ew.grad))


def test_saved_tensors_are_freed_during_the_backward_when_an_output_is_unused():
    # with an output the loss does not use, the node checked the saved tensors' versions through a list that held
    # every one of them until the backward returned: the backward's memory grew where eager's shrinks (the GPT's
    # peak 7 MB over eager's, and its backward page-faulting on every step). Each is freed after its last use.
    import weakref

    from torch.utils._python_dispatch import TorchDispatchMode

    def f(x, w1, w2):
        h = torch.tanh(x @ w1)
        return h, torch.tanh(h @ w2).sum()

    x, w1, w2 = _leaves((8, 16), (16, 16), (16, 16))
    h, loss = thunder.jit(f)(x, w1, w2)
    saved = [weakref.ref(t) for t in loss.grad_fn.saved if isinstance(t, torch.Tensor) and t.numel() > 1
             and not any(t is p for p in (x, w1, w2))]
    assert saved
    alive = []

    class CountAliveAtProducts(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten.mm.default:
                alive.append(sum(r() is not None for r in saved))
            return func(*args, **(kwargs or {}))

    with CountAliveAtProducts():
        loss.backward()
    # the first product needs none of them (tanh's derivative is computed before), the last none either
    assert alive[0] < len(saved) and alive[-1] == 0, alive
    ex, ew1, ew2 = _clone_leaves([x, w1, w2])
    eh, eloss = f(ex, ew1, ew2)
    eloss.backward()
    torch.testing.assert_close((h, loss), (eh, eloss))
    torch.testing.assert_close((x.grad, w1.grad, w2.grad), (ex.grad, ew1.grad, ew2.grad))


def test_an_unused_outputs_zero_is_not_added_to_a_reshaped_gradient():
    # a model returning (logits, loss) with the loss taken on logits.view(-1, C) (nanoGPT): the gradient reaching
    # logits is the loss's gradient reshaped back; with logits unused, the backward reads that reshape where it added
    # the zero (eager's view node passes it on), and no zero is made
    def f(x, w, target):
        logits = x @ w
        return logits, torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]), target)

    x, w = _leaves((2, 3, 4), (4, 5))
    ex, ew = _clone_leaves([x, w])
    target = torch.tensor([0, 4, 1, 2, 3, 0])
    jf = thunder.jit(f)
    actual = jf(x, w, target)
    loss = actual[1]
    loss.backward()
    expected = f(ex, ew, target)
    expected[1].backward()
    assert torch.equal(x.grad, ex.grad) and torch.equal(w.grad, ew.grad)
    torch.testing.assert_close(actual, expected)
    compiled = loss.grad_fn._forward_cls.compiled
    (unused, (_, zeros)), = compiled.specialized.items()
    assert not zeros
    backward = str(compiled.specialized_traces[unused])
    (cotangent,) = [compiled.cotangent_names[k] for k in unused]
    assert "torch.add(" not in backward and f"{cotangent}," not in backward.split("):", 1)[1], backward


def test_backward_folds_the_reshape_chains_of_view_chains():
    # each view's rule reshapes its cotangent back: a chain of views gave a chain of reshapes, some to the shape the
    # tensor already had (.contiguous()'s), each a call at run time; one reshape per chain of a contiguous tensor (the
    # matmul's gradient) is left, and the gradients are eager's bit for bit
    def f(x, w):
        h = x.view(4, 2, 3, 8).transpose(1, 2).contiguous()
        return (h.view(4, 3, 16).reshape(4, 48) @ w).sum()

    x, w = _leaves((4, 6, 8), (48, 5))
    ex, ew = _clone_leaves([x, w])
    jf = thunder.jit(f)
    actual, expected = jf(x, w), f(ex, ew)
    actual.backward()
    expected.backward()
    torch.testing.assert_close(actual, expected)
    assert torch.equal(x.grad, ex.grad) and torch.equal(w.grad, ew.grad)
    backward = str(thunder.last_backward_traces(jf)[-1])
    # into the transposed shape, back to x's after the permute, and w's gradient (returned as the reshape made it)
    assert backward.count("reshape(") == 3, backward


@pytest.mark.parametrize("shape", [(2, 3), (4, 5), (1, 3)])
def test_a_gradient_through_a_copying_reshape_chain_has_eager_strides(shape):
    # x.reshape(n).reshape(a, b) of a transposed tensor copies (contiguous); one reshape of it to (a, b) would be a
    # view with the transposed strides: the backward keeps the chain where the tensor may be non-contiguous
    def f(x, w):
        n = x.numel()
        return x.reshape(n).reshape(x.shape).t() * w, x.t().reshape(n).reshape(x.shape[1], x.shape[0]) * w

    jf = thunder.jit(f)
    for call in range(2):
        x, w = _leaves(shape, shape[::-1], seed=call)
        ex, ew = _clone_leaves([x, w])
        for cotangents in (False, True):
            outs, eouts = jf(x, w), f(ex, ew)
            grads = [torch.randn_like(o).t().contiguous().t() if cotangents else torch.ones_like(o) for o in eouts]
            got = torch.autograd.grad(outs, (x, w), grads)
            want = torch.autograd.grad(eouts, (ex, ew), grads)
            for g, e in zip(got, want):
                assert torch.equal(g, e) and g.stride() == e.stride(), (g.stride(), e.stride())


def test_backward_computes_a_repeated_product_once():
    # x * x (RMSNorm's pow(2)) gives the rule's two products g * x; the backward computes it once and adds it to
    # itself, with eager's gradients bit for bit
    def f(x, w):
        return (x.pow(2).mean(-1, keepdim=True) * w).sum()

    x, w = _leaves((4, 8), (4, 1))
    ex, ew = _clone_leaves([x, w])
    jf = thunder.jit(f)
    jf(x, w).backward()
    f(ex, ew).backward()
    assert torch.equal(x.grad, ex.grad) and torch.equal(w.grad, ew.grad)
    products = [b for b in thunder.last_backward_traces(jf)[-1].bound_symbols
                if b.sym.name == "mul" and any(getattr(a, "name", None) == "x" for a in b.flat_proxy_args)]
    assert len(products) == 1, products

def test_gradients_accumulate_across_calls_and_retain_graph():
    lin = torch.nn.Linear(4, 3)
    ref = torch.nn.Linear(4, 3)
    ref.load_state_dict(lin.state_dict())
    jlin = thunder.jit(lin)
    x = torch.randn(2, 4)
    for _ in range(2):  # .grad accumulates over calls, as in eager
        jlin(x).pow(2).sum().backward()
        ref(x).pow(2).sum().backward()
    torch.testing.assert_close(lin.weight.grad, ref.weight.grad)
    torch.testing.assert_close(lin.bias.grad, ref.bias.grad)

    loss, eloss = jlin(x).sum(), ref(x).sum()
    loss.backward(retain_graph=True)
    loss.backward()  # a second backward through the same graph works with retain_graph
    eloss.backward(retain_graph=True)
    eloss.backward()
    torch.testing.assert_close(lin.weight.grad, ref.weight.grad)

    loss = jlin(x).exp().sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()  # freed, as in eager


def test_saved_input_modified_in_place_after_the_call_is_detected():
    def f(a, b):
        return (a * b).sum()

    a, b = _leaves((3,), (3,))
    c = b.detach()
    out = thunder.jit(f)(a, c.requires_grad_(False))
    c.add_(1)  # a saved tensor changed before backward: PyTorch's version check fires, as in eager
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_grad_mode_and_requires_grad_select_cache_entries():
    lin = torch.nn.Linear(4, 4)
    jlin = thunder.jit(lin)
    x = torch.randn(2, 4)
    out = jlin(x)
    assert out.requires_grad and thunder.last_backward_traces(jlin)
    with torch.no_grad():
        out = jlin(x)
    assert not out.requires_grad and not thunder.last_backward_traces(jlin)
    with torch.inference_mode():
        out = jlin(x)
    assert not out.requires_grad
    lin.bias.requires_grad_(False)
    jlin(x).sum().backward()
    ref = torch.nn.Linear(4, 4)
    ref.load_state_dict(lin.state_dict())
    ref.bias.requires_grad_(False)
    ref(x).sum().backward()
    assert lin.bias.grad is None
    torch.testing.assert_close(lin.weight.grad, ref.weight.grad)
    assert len(thunder.last_backward_traces(jlin)[-1].output) == 1  # no gradient is computed for the frozen bias
    # grad on with weights, no_grad, bias frozen: three entries (inference mode shares no_grad's)
    assert thunder.cache_misses(jlin) == 3
    lin.bias.requires_grad_(True)
    jlin(x)
    assert thunder.cache_misses(jlin) == 3  # the first entry again


def test_no_grad_region_inside_the_function():
    def f(x, w):
        with torch.no_grad():
            scale = (x * w).abs().max()
        return x * w / scale

    x, w = _leaves((3, 3), (3, 3))
    ex, ew = _clone_leaves([x, w])
    thunder.jit(f)(x, w).sum().backward()
    f(ex, ew).sum().backward()
    torch.testing.assert_close(x.grad, ex.grad)
    torch.testing.assert_close(w.grad, ew.grad)


def test_detach_stops_gradients():
    def f(x):
        return x * x.detach()

    (x,) = _leaves((4,))
    (ex,) = _clone_leaves([x])
    thunder.jit(f)(x).sum().backward()
    f(ex).sum().backward()
    torch.testing.assert_close(x.grad, ex.grad)


def test_unused_input_gets_no_gradient_and_returned_input_is_the_same_tensor():
    def f(x, unused):
        return x, x * 2

    x, u = _leaves((3,), (3,))
    same, doubled = thunder.jit(f)(x, u)
    assert same is x
    doubled.sum().backward()
    assert u.grad is None
    torch.testing.assert_close(x.grad, torch.full((3,), 2.0))


def test_opaque_ops_are_differentiated_by_pytorch():
    def f(x):
        return torch.special.xlogy(x, x.abs() + 1).sum()

    (x,) = _leaves((5,))
    (ex,) = _clone_leaves([x])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the opaque-fallback warning (once per op and process)
        jf = thunder.jit(f)
        jf(x).backward()
    f(ex).backward()
    torch.testing.assert_close(x.grad, ex.grad)
    assert "with_torch_autograd" in str(thunder.last_traces(jf)[-1])


def test_dropout_masks_are_saved_not_redrawn():
    def f(x):
        return torch.nn.functional.dropout(x, 0.5, training=True) * 3

    (x,) = _leaves((64,))
    (ex,) = _clone_leaves([x])
    torch.manual_seed(5)
    out = thunder.jit(f)(x)
    out.sum().backward()
    torch.manual_seed(5)
    eout = f(ex)
    eout.sum().backward()
    torch.testing.assert_close(out, eout)
    torch.testing.assert_close(x.grad, ex.grad)


def test_in_place_update_of_a_leaf_that_requires_grad_fails_as_in_eager():
    def g(w):
        return w.add_(1)

    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        thunder.jit(g)(torch.randn(3, requires_grad=True))

    def h(w):
        w.mul_(2)
        return w.sum()

    nonleaf = torch.randn(3, requires_grad=True) * 1
    with pytest.raises(UnsupportedError, match="in-place update of w"):
        thunder.jit(h)(nonleaf)


def test_saved_bytes_are_reported():
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 16))
    jm = thunder.jit(mlp)
    jm(torch.randn(8, 16)).sum().backward()
    stats = thunder.compile_stats(jm)
    assert stats.last_saved_for_backward_bytes > 0
    report = thunder.examine.saved_for_backward(jm)
    assert report.total_bytes == stats.last_saved_for_backward_bytes
    assert "bytes saved for backward" in str(report)


def test_complex_inputs_that_require_grad_are_refused_clearly():
    x = torch.randn(3, dtype=torch.complex64, requires_grad=True)
    with pytest.raises(UnsupportedError, match="complex"):
        thunder.jit(lambda x: (x * x).abs().sum())(x)


def test_a_program_with_no_differentiable_output_matches_eager():
    # inputs require grad, grad mode is on, yet nothing the program returns can carry a gradient: it runs without an
    # autograd node (the cost of an optimizer step's call), its results and grad mode as eager leaves them
    def f(x, buf):
        with torch.no_grad():
            buf.mul_(0.5).add_(x)
        return (x > 0).sum(), x.detach() * 2, buf

    def g(x):
        torch.set_grad_enabled(False)
        return x * 3

    x = torch.randn(5, requires_grad=True)
    buf, ref_buf = torch.ones(5), torch.ones(5)
    jf = thunder.jit(f)
    for _ in range(2):
        got, want = jf(x, buf), f(x, ref_buf)
        for a, b in zip(got, want):
            assert torch.equal(a, b) and a.requires_grad == b.requires_grad and a.grad_fn is None
        assert torch.equal(buf, ref_buf) and torch.is_grad_enabled()
    assert thunder.cache_misses(jf) == 1
    try:
        y = thunder.jit(g)(x)
        assert not torch.is_grad_enabled() and not y.requires_grad
        torch.testing.assert_close(y, x.detach() * 3)
    finally:
        torch.set_grad_enabled(True)


def test_a_saved_output_is_freed_with_the_last_reference_to_it():
    # exp saves its own output for the backward: the node holding it must not be kept alive by it (a reference cycle
    # through C++ that no garbage collection breaks), whether or not a backward ever runs
    import weakref

    jf = thunder.jit(lambda x: x.exp())
    x = torch.randn(3, requires_grad=True)
    for run_backward in (False, True):
        y = jf(x)
        node = weakref.ref(y.grad_fn)
        if run_backward:
            y.sum().backward()
            torch.testing.assert_close(x.grad, x.detach().exp())
        del y
        assert node() is None


def test_saved_tensor_hooks_see_the_saved_tensors():
    # save_on_cpu, checkpointing and user hooks get every tensor the node saves, as for eager's nodes
    def f(a, b):
        return (a * b).sin().sum()

    a, b = _leaves((4,), (4,))
    packed, unpacked = [], []

    def pack(t):  # the node holds a token: its backward can only get the tensor back through unpack
        packed.append(t)
        return len(packed) - 1

    def unpack(i):
        unpacked.append(i)
        return packed[i]

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = thunder.jit(f)(a, b)
    assert packed
    out.backward()
    assert sorted(unpacked) == list(range(len(packed)))  # the backward read each saved tensor through the hooks
    a2, b2 = a.detach().requires_grad_(), b.detach().requires_grad_()
    f(a2, b2).backward()
    torch.testing.assert_close((a.grad, b.grad), (a2.grad, b2.grad))


def test_an_output_the_loss_does_not_use_gets_gradients_like_eager():
    # the model returns its logits and its loss, the loss alone is differentiated: the logits' cotangent is a zero
    # made without a zero-filled tensor, and the gradients are eager's
    def f(x, w):
        logits = x @ w
        return logits, logits.log_softmax(-1).mean(), (logits * 2).sum()

    x, w = _leaves((4, 3), (3, 5))
    xe, we = _clone_leaves([x, w])
    jf = thunder.jit(f)
    for which in (1, 2, 0):
        got, want = jf(x, w), f(xe, we)
        got[which].sum().backward()
        want[which].sum().backward()
        torch.testing.assert_close((x.grad, w.grad), (xe.grad, we.grad))


def _backward_outcome(fn, use_all_outputs=True):
    x = torch.tensor([3.0, 1.0, 1.0, 2.0, 5.0], requires_grad=True)
    out = fn(x)
    outs = out if isinstance(out, tuple) else (out,)
    flags = [o.requires_grad for o in outs]
    loss = sum(o.float().sum() for o in (outs if use_all_outputs else outs[:1]) if o.requires_grad)
    try:
        loss.backward()
    except Exception as e:
        return flags, type(e), str(e)
    return flags, x.grad


NO_EAGER_DERIVATIVE = {
    "unique": lambda x: x.unique() * 2,
    "unique(sorted=False)": lambda x: torch.unique(x, sorted=False),
    "unique with counts": lambda x: x.unique(return_counts=True),
    "unique_consecutive with inverse": lambda x: torch.unique_consecutive(x, return_inverse=True),
    "histc (not differentiable)": lambda x: (torch.histc(x), x * 2),
    "unique's size only": lambda x: x * x.unique().numel(),
    "floor_divide": lambda x: (torch.floor_divide(x, 2.0), x * 2),
    "floor_divide by a tensor": lambda x: (x // (x + 1), x * 2),
}


@pytest.mark.parametrize("name", list(NO_EAGER_DERIVATIVE))
@pytest.mark.parametrize("use_all_outputs", [True, False])
def test_ops_without_an_eager_derivative_require_grad_and_fail_in_backward_like_eager(name, use_all_outputs):
    # eager: unique's values require grad and a backward reaching them raises NotImplementedError; histc's result
    # does not require grad; a backward that does not reach unique's values is fine
    fn = NO_EAGER_DERIVATIVE[name]
    expected = _backward_outcome(fn, use_all_outputs)
    got = _backward_outcome(thunder.jit(fn), use_all_outputs)
    assert str(got) == str(expected)


@pytest.mark.parametrize("restride", ["squeeze_", "t_", "unsqueeze_"])
def test_an_input_whose_shape_the_call_changes_in_place_is_saved_as_it_was_read(restride):
    # fuzz seed 200709: the input was saved for backward as itself, then the epilogue's t1.squeeze_() bumped its
    # version and changed its shape, and the backward raised where eager's does not
    def f(t0, t1):
        getattr(t1, restride)(*((0,) if restride == "unsqueeze_" else ()))
        return t1 * t0

    grads = []
    for fn in (f, thunder.jit(f)):
        t0 = torch.arange(2.0, dtype=torch.float64).reshape(2, 1).requires_grad_()
        t1 = torch.tensor([[3.0], [4.0]])
        out = fn(t0, t1)
        out.sum().backward()
        grads.append((out, t0.grad, t1.shape, t1._version))
    (eo, eg, es, ev), (to, tg, ts, tv) = grads
    torch.testing.assert_close(to, eo)
    torch.testing.assert_close(tg, eg)
    assert (ts, tv) == (es, ev)


def _modified_input_mul(t0, t1):
    v = t0 * t1
    t0[..., 0] = 1
    return v


def _modified_through_a_view(t0, t1):
    v = torch.minimum(t1, t0)
    t0.transpose(0, -1).add_(1)
    return torch.where(v > 0, v, 0.5)


def _modified_bool_input(t0, t1):
    v = torch.maximum(t1, t0)
    t1.fill_(True)
    return v * 2


def _modified_intermediate(t0, t1):
    r = t1.repeat(2, 1)
    v = torch.maximum(r, t0)[0, 1]
    r.masked_fill_(r > 0, 0)
    return torch.sigmoid(v)


def _modified_intermediate_requiring_grad(t0, t1):  # eager names the saved tensor's grad_fn
    z = t0 * 2
    w = z.sin()
    z.add_(1)
    return w


def _result_saved_not_the_input(t0, t1):  # exp saves its result: updating t1 afterwards is fine
    e = (t0 * 2).exp()
    t1.add_(1)
    return e * t1


def _restrided_then_written(t0, t1):  # t_() counts as an update of the version
    t1.t_()
    v = torch.nn.functional.linear(t0, t1)
    t1[-1] = t1[0]
    return v


def _restrided_after_the_read(t0, t1):  # eager's message shows the saved tensor's sizes after t_() (seed 240147)
    v1 = t1[0] ** 2 + t1
    v = torch.atan2(t0, v1)
    v1.t_()
    return v


def _updated_after_a_value_read(t0, t1):  # the program is split at the mask's size
    t1[t1 > 0] = 0
    v = torch.maximum(t1, t0.reshape(-1).flip(0))
    t1[0].mul_(2)
    return v


def _rg(t):
    return t.requires_grad_()


SAVED_THEN_MODIFIED = {  # name -> (program, its arguments: the one requiring grad is not the one updated)
    "input read by mul": (_modified_input_mul, lambda: (torch.tensor([2.0, 3.0]), _rg(torch.tensor([1.5])))),
    "input written through a view": (_modified_through_a_view,
                                     lambda: (torch.randn(2, 2, 2), _rg(torch.randn(2, 1, 2)))),
    "bool input": (_modified_bool_input, lambda: (_rg(torch.randn(2)), torch.tensor([True, False]))),
    "intermediate": (_modified_intermediate, lambda: (_rg(torch.randn(2)), torch.randn(2))),
    "intermediate requiring grad": (_modified_intermediate_requiring_grad, lambda: (_rg(torch.randn(2)), None)),
    "saved result": (_result_saved_not_the_input, lambda: (_rg(torch.randn(2)), torch.randn(2))),
    "restrided input": (_restrided_then_written, lambda: (_rg(torch.randn(1, 2)), torch.randn(2))),
    "re-strided after the read": (_restrided_after_the_read, lambda: (_rg(torch.randn(2, 3)), torch.randn(2, 3))),
    "after a value read": (_updated_after_a_value_read, lambda: (_rg(torch.randn((), dtype=torch.float64)),
                                                                 torch.randn(2, 2, 2))),
}


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("name", list(SAVED_THEN_MODIFIED))
def test_a_saved_tensor_updated_in_place_later_fails_the_backward_like_eager(name, cache):
    # eager saves some tensors for backward and checks their version when the backward reaches the op; thunder's
    # functional trace would compute the gradient of the old value and succeed where eager raises (fuzz seeds
    # 7, 200277, 200289, 201597, 201743, 202895, ...)
    fn, make = SAVED_THEN_MODIFIED[name]
    jfn = thunder.jit(fn, cache=cache)

    def outcome(f, args):
        try:
            f(*args).sum().backward()
        except RuntimeError as e:
            return str(e)
        return [a.grad for a in args if a is not None and a.requires_grad]

    for entry_version in (0, 3):  # eager's numbers count from the version the input had before the call
        args = make()
        jargs = tuple(a.detach().clone().requires_grad_(a.requires_grad) if a is not None else None for a in args)
        for a, b in zip(args, jargs):
            if a is not None and not a.requires_grad:
                for _ in range(entry_version):
                    a.add_(0) if a.dtype != torch.bool else a.logical_or_(a)
                    b.add_(0) if b.dtype != torch.bool else b.logical_or_(b)
        expected, got = outcome(fn, args), outcome(jfn, jargs)
        assert str(got) == str(expected)


def _no_grad_view_updated_with_grad(x):  # fuzz seed 345206: the view's grad_fn is eager's regenerated AsStrided
    y = x.detach() * 1
    v = y[1]
    c = v * x
    v.mul_(x[0])
    return c


def _expanded_no_grad_view_read_by_matmul(x):  # fuzz seed 365410: matmul saves a copy of an expanded view
    v = (x.detach()[:, :3] * 2).expand(2, 3, 3)
    c = torch.matmul(v, x)
    v[0].mul_(3)
    return c


def _expanded_view_of_a_value_needing_grad_read_by_matmul(x):
    y = x[:, :3] * 2
    c = torch.matmul(y.expand(2, 3, 3), x)
    y.mul_(3)
    return c


def _transposed_view_read_by_matmul(x):  # matmul of a transposed view saves the view itself
    y = x.detach() * 1
    c = x @ y.t()
    y.add_(1)
    return c


def _base_saved_view_updated(x):  # the base's grad_fn is CopySlices
    y = x * 1
    c = y * x
    y[1].mul_(2)
    return c


def _view_saved_base_updated(x):
    y = x * 1
    c = y[1] * x[0]
    y.mul_(2)
    return c


def _updated_under_no_grad(x):  # the update records no grad_fn: eager names the op that made the tensor
    y = x.exp()
    c = y * x
    with torch.no_grad():
        y.mul_(2)
    return c


def _input_updated_under_no_grad(x):  # a leaf: eager's message names no grad_fn
    c = x * x
    with torch.no_grad():
        x.mul_(2)
    return c


def _view_made_under_no_grad_base_updated(x):
    y = x * 2
    with torch.no_grad():
        y[1].sum()
    c = y * x
    y.add_(1)
    return c


def _amin_result_updated_through_a_view(x):  # amin saves its result: eager names its node
    y = x.amin(1)
    c = y * 1
    y[0:2].add_(1)
    return c


def _updated_with_grad_read_then_updated_again(x):  # versions count the update before the read
    y = x.detach() * 1
    v = y[0]
    v.mul_(x[0])
    c = v * x[0]
    y.add_(1)
    return c


def _updated_then_restrided(x):  # eager's message shows the sizes after t_() and names its node
    v = (x.detach() * 1)[0:2]
    c = v * x[:2]
    v.mul_(x[0])
    v.t_()
    return c


def _second_result_of_an_opaque_op_updated(x):  # aminmax saves both results: eager names output 1 of its node
    a, b = torch.aminmax(x, dim=1)
    c = a * 1
    b.add_(1)
    return c


def _qr_factor_updated(x):
    q, r = torch.linalg.qr(x)
    c = q * 1
    r.add_(1)
    return c


def _singular_values_updated(x):
    u, s, vh = torch.linalg.svd(x, full_matrices=False)
    c = u * 1
    s.add_(1)
    return c


def _eigenvectors_updated(x):  # an opaque op whose results torch.return_types holds
    vals, vecs = torch.linalg.eigh(x @ x.T)
    c = vals * 1
    vecs.add_(1)
    return c


def _lu_factors_updated(x):  # fails on a zero matrix: the stand-ins are not zeros
    lu, pivots = torch.linalg.lu_factor(x[:, :3])
    c = lu * 1
    lu.add_(1)
    return c


def _inverse_updated(x):
    y = torch.linalg.inv(x[:, :3])
    c = y * 1
    y.add_(1)
    return c


def _saved_tensor_written_through_out(x):  # prims.copy_(value, out=z) updates z, its out= argument
    z = x.detach() * 1
    c = z[0] * x[0]
    torch.mul(x.detach()[1], 2, out=z[0])
    return c


SAVED_MEMORY_HISTORY = {f.__name__[1:]: f for f in (
    _saved_tensor_written_through_out,
    _second_result_of_an_opaque_op_updated, _qr_factor_updated, _singular_values_updated, _eigenvectors_updated,
    _lu_factors_updated, _inverse_updated,
    _no_grad_view_updated_with_grad, _expanded_no_grad_view_read_by_matmul,
    _expanded_view_of_a_value_needing_grad_read_by_matmul, _transposed_view_read_by_matmul, _base_saved_view_updated,
    _view_saved_base_updated, _updated_under_no_grad, _input_updated_under_no_grad,
    _view_made_under_no_grad_base_updated, _amin_result_updated_through_a_view,
    _updated_with_grad_read_then_updated_again, _updated_then_restrided)}


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("name", list(SAVED_MEMORY_HISTORY))
def test_whether_and_how_a_saved_tensor_updated_later_fails_follows_its_memorys_history(name, cache):
    # eager's answer depends on the views and updates of the saved tensor's memory: whether the op saved the
    # tensor or a copy (its layout), and the grad_fn the message names (the update's, a view's AsStrided, the
    # base's CopySlices, or the producer's where the update recorded none)
    fn = SAVED_MEMORY_HISTORY[name]

    def outcome(f, x):
        try:
            f(x).sum().backward()
        except RuntimeError as e:
            return str(e)
        return x.grad

    (x,) = _leaves((3, 4))
    (xj,) = _clone_leaves([x])
    expected, got = outcome(fn, x), outcome(thunder.jit(fn, cache=cache), xj)
    if isinstance(expected, str):
        assert got == expected
    else:
        torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_a_saved_tensor_updated_through_data_is_refused_when_the_backward_reaches_it(cache):
    # x.data has a version counter of its own: eager's backward runs, computing with the updated values, which a
    # functional gradient cannot (main raised eager's version error here, where eager raises none)
    def f(x):
        y = x * 1
        c = y * x
        y.data.mul_(2)
        return c, x * 3

    jf = thunder.jit(f, cache=cache)
    (x,) = _leaves((3, 4))
    c, d = f(x)
    c.sum().backward()
    torch.testing.assert_close(x.grad, 3 * x.detach())  # 2x (the updated y) + x
    (xj,) = _clone_leaves([x])
    jf(xj)[1].sum().backward()  # a backward that does not reach the op runs
    with pytest.raises(RuntimeError, match="updated afterwards through .data"):
        jf(xj)[0].sum().backward()


def test_asking_eager_about_a_saved_tensor_leaves_the_random_numbers_alone():
    # the replay runs the dropout that made the saved tensor: the program's later draws must be eager's
    def f(x, w):
        y = torch.nn.functional.dropout(x * w, 0.5)
        z = y * w
        y.add_(1)
        return z, torch.rand(2)

    draws = []
    for fn in (f, thunder.jit(f)):
        torch.manual_seed(0)
        z, r = fn(torch.randn(3), torch.randn(3, requires_grad=True))
        draws.append((z.detach(), r, torch.rand(1)))
    torch.testing.assert_close(draws[1], draws[0])


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_a_backward_that_does_not_reach_the_op_runs_like_eager(cache):
    def f(t0, t1):
        a = t0 * t1
        t0.add_(1)
        return a, t1 * 3

    for fn in (f, thunder.jit(f, cache=cache)):
        t1 = torch.ones(2, requires_grad=True)
        fn(torch.ones(2), t1)[1].sum().backward()  # the loss does not use `a`: mul's backward is never reached
        assert t1.grad.tolist() == [3.0, 3.0]


def test_a_value_read_split_keeps_unused_outputs_unreached():
    # fuzz seed 220935: under symbolic values the segment before the read hands `v` on (a later segment might use
    # it); the loss does not, so eager's backward never reaches the division whose saved t0 the store updated
    def f(t0, t1):
        v = t0 / t1  # noqa: F841 (live at the split, unused after)
        out = torch.minimum(t1, t1)
        t0[t0 > 0] = 0
        return out

    for fn in (f, thunder.jit(f, cache="symbolic values")):
        t1 = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
        fn(torch.tensor([1, -2, 3]), t1).sum().backward()
        assert t1.grad.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_an_input_reaching_only_outputs_the_loss_does_not_use_gets_no_gradient(cache):
    # eager's graph reaches an input only from the outputs the backward starts at: b.grad stays None, not zeros
    # (fuzz seed 209897: a value a split hands over to later segments, which the loss never reads)
    def f(a, b):
        return a * 2, b * 3, (a + b).sum()

    jf = thunder.jit(f, cache=cache)
    for which in (0, 1, 2):
        a, b = _leaves((3,), (3,))
        ae, be = _clone_leaves([a, b])
        jf(a, b)[which].sum().backward()
        f(ae, be)[which].sum().backward()
        assert (a.grad is None, b.grad is None) == (ae.grad is None, be.grad is None)
        torch.testing.assert_close((a.grad, b.grad), (ae.grad, be.grad))


@pytest.mark.parametrize("zero_derivative", [torch.floor, torch.ceil, torch.round, torch.trunc, torch.sign])
@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_an_input_reaching_a_used_output_through_a_zero_derivative_op_gets_zeros(zero_derivative, cache):
    # eager's graph runs through floor (its derivative is zero) and gives x a zero gradient; thunder's backward has no
    # op on that path, which once read as "x reaches only the unused output" and gave None (fuzz seed 265869)
    def f(x):
        return x * 2, zero_derivative(x) * 3

    jf = thunder.jit(f, cache=cache)
    for which in (0, 1):
        (x,) = _leaves((3,))
        (xe,) = _clone_leaves([x])
        jf(x)[which].sum().backward()
        f(xe)[which].sum().backward()
        torch.testing.assert_close(x.grad, xe.grad)


@pytest.mark.parametrize("zero_derivative", [torch.floor, torch.ceil, torch.round, torch.trunc, torch.sign])
@pytest.mark.parametrize("use", ["mul", "div", "div_through_a_view"])
def test_a_saved_tensor_updated_behind_a_zero_derivative_op_raises_eagers_error(zero_derivative, use):
    # fuzz seed 420225: eager's engine reaches the node that saved y (its gradient flows on into floor's, which is
    # zero) and raises on y's version; thunder's backward dropped the error with the dead path to floor's zero
    def f(x, y):
        z = zero_derivative(x)
        v = z * y if use == "mul" else y / z
        if use == "div_through_a_view":
            y.unsqueeze(0).mul_(2)
        else:
            y.add_(1)
        return (v.abs() + 1) ** 2

    messages = []
    for fn in (f, thunder.jit(f)):
        x = torch.tensor([1.5, -2.5, 3.2], requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            fn(x, torch.tensor([1.0, 2.0, 3.0])).sum().backward()
        messages.append(str(info.value))
    assert messages[1] == messages[0]


def test_an_input_reaching_a_used_output_of_a_later_segment_through_floor_gets_zeros():
    # fuzz seed 265869: the split at unique hands t1 * t0 (unused after) and floor's result over; the loss reaches
    # t1 only through floor
    def f(t0, t1):
        v2 = t1 * t0  # noqa: F841 (live at the split, unused after)
        v4 = torch.stack([torch.floor(t1), t1.floor() * 2], -1)
        v4[0].unique()
        return torch.cumsum(v4, 2).reciprocal()

    for cache in ("constant values", "symbolic values"):
        _, t1 = _leaves((3, 4), (3, 4))
        (t1e,) = _clone_leaves([t1])
        t0 = torch.rand(3, 4) > 0.5
        thunder.jit(f, cache=cache)(t0, t1).sum().backward()
        f(t0, t1e).sum().backward()
        torch.testing.assert_close(t1.grad, t1e.grad)


def test_a_value_handed_over_a_split_and_unused_gives_its_input_no_gradient():
    def f(t0, t1):
        m = t1.mean()  # noqa: F841 - live at the split, so handed over to the next segment, which does not use it
        v = t0[0] @ t0[0].mT
        v[(v > 0).nonzero(as_tuple=True)]
        return t0[1],

    for cache in ("constant values", "symbolic values"):
        t0, t1 = _leaves((2, 2, 2), (3,))
        thunder.jit(f, cache=cache)(t0, t1)[0].sum().backward()
        assert t0.grad is not None and t1.grad is None


def test_a_call_under_a_torch_func_transform_is_refused_clearly_and_the_cached_entry_still_runs():
    # the autograd node is created in C++ directly (no Function.apply), so the prologue checks that no functorch
    # transform is active: a call under torch.func.grad compiles anew and is refused with thunder's reason
    def f(x):
        return (x.sin() * 2).sum()

    x = torch.randn(3, requires_grad=True)
    jf = thunder.jit(f)
    jf(x).backward()
    with pytest.raises(UnsupportedError, match="torch.func transform"):
        torch.func.grad(jf)(x.detach().requires_grad_())
    x.grad = None
    out = jf(x)
    out.backward()
    torch.testing.assert_close(x.grad, 2 * x.detach().cos())
    # vmap's batched inputs do not require grad: the mapped program runs, as eager's does
    xs = torch.randn(4, 3, requires_grad=True)
    torch.testing.assert_close(torch.func.vmap(jf)(xs), torch.func.vmap(f)(xs))
    assert thunder.cache_hits(jf) >= 1


def test_an_unused_unique_handed_over_a_split_is_not_reached_by_the_backward():
    # fuzz seed 310521: `u` is live at the split (the mask's size), so the segment before hands it over; the loss does
    # not use it and eager's backward never reaches unique's missing derivative
    def f(x, y):
        u = x.unique()  # noqa: F841 (live at the split, unused after)
        out = x * 2
        y[y > 0] = 0
        return out

    for fn in (f, thunder.jit(f)):
        x = torch.tensor([1.0, 2.0, 2.0], requires_grad=True)
        fn(x, torch.tensor([1.0, -1.0])).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_a_copy_of_a_value_that_needs_no_grad_keeps_eagers_message():
    # fuzz seed 310731: zeros_like(v) reads only v's shape, so copying it into t0 is an update without grad_fn and
    # eager's message names no grad_fn
    def f(t0, t1):
        v1 = t0 * t1
        v2 = torch.zeros_like(v1)
        t0.copy_(v2)
        return v2, v1

    messages = []
    for fn in (f, thunder.jit(f)):
        t1 = torch.ones(2, 2, dtype=torch.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as raised:
            fn(torch.ones(2, 2, dtype=torch.float64), t1)[1].sum().backward()
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


PIECEWISE_CONSTANT = {
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "trunc": torch.trunc, "sign": torch.sign,
}


@pytest.mark.parametrize("name", list(PIECEWISE_CONSTANT))
def test_a_piecewise_constant_ops_output_requires_grad_as_in_eager(name):
    # fuzz seeds 249543, 243834: floor's result requires grad in eager (zero gradients); thunder's meta said it did
    # not, so the opaque norm after it (run by PyTorch's autograd on that requires_grad) returned a tensor without
    # grad
    op = PIECEWISE_CONSTANT[name]

    def f(x):
        return op(x * 2.5).norm(dim=-1), op(x)

    expected = _backward_outcome(f)
    got = _backward_outcome(thunder.jit(f))
    assert expected[0] == [True, True]
    assert str(got) == str(expected)


def _copy_into_a_computed_tensor(t0):
    v = torch.zeros(2, 2)
    v.copy_(t0)
    return v


def _add_into_a_computed_tensor(t0):
    v = torch.zeros(2, 2)
    v.add_(t0)
    return v


def _setitem_into_a_computed_tensor(t0):
    v = torch.zeros(2, 2)
    v[0] = t0[1]
    return v


@pytest.mark.parametrize("write", [_copy_into_a_computed_tensor, _add_into_a_computed_tensor,
                                   _setitem_into_a_computed_tensor])
def test_a_computed_tensor_written_with_a_value_that_requires_grad_requires_grad(write):
    # fuzz seed 242220: v.copy_(t0) makes v require grad in eager; thunder's proxy of v kept requires_grad=False, so
    # the opaque norm reading it (run by PyTorch's autograd on that flag) returned a tensor without grad
    def f(t0):
        v = write(t0)
        return v.norm(dim=-1), v.requires_grad, v.is_leaf

    def f_no_grad(t0):
        with torch.no_grad():
            v = write(t0)
        return v.norm(dim=-1), v.requires_grad

    for fn, want in ((f, [True, True, False]), (f_no_grad, [False, False])):
        results = []
        for g in (fn, thunder.jit(fn)):
            x = torch.arange(1.0, 5.0).reshape(2, 2).requires_grad_()
            out = g(x)
            flags = [out[0].requires_grad, *out[1:]]
            if out[0].requires_grad:
                out[0].sum().backward()
            results.append((flags, x.grad))
        assert results[0][0] == results[1][0] == want
        torch.testing.assert_close(results[1][1], results[0][1])


EXTREMA_UNDER_A_NAN_GRADIENT = {
    "minimum": lambda a, b: torch.minimum(a, b)[:1], "maximum": lambda a, b: torch.maximum(a, b)[:1],
    "min(a, b)": lambda a, b: torch.min(a, b)[:1], "max(a, b)": lambda a, b: torch.max(a, b)[:1],
    "min()": lambda a, b: (a * b).min().reshape(1), "max()": lambda a, b: (a * b).max().reshape(1),
}


@pytest.mark.parametrize("name", list(EXTREMA_UNDER_A_NAN_GRADIENT))
def test_extrema_give_the_loser_zero_gradient_even_under_a_nan_gradient(name):
    # fuzz seed 248040: minimum(t2, t1).std(-1) of one element: std's gradient is nan; eager's minimum backward
    # selects 0 for the loser (eager's CPU max()/min() too), thunder multiplied the nan by a 0/1 mask; nan inputs
    # win as in eager
    op = EXTREMA_UNDER_A_NAN_GRADIENT[name]
    nan = float("nan")
    pairs = [([0.3, 4.0], [0.5, 1.0]), ([nan, 2.0], [1.0, 2.0]), ([2.0, 1.0], [2.0, nan]), ([1.0, 3.0], [nan, 0.5])]
    grads = []
    for fn in (lambda a, b: op(a, b).std(-1), thunder.jit(lambda a, b: op(a, b).std(-1))):
        for a, b in pairs:
            a, b = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
            fn(a, b).backward()
            grads.append((a.grad, b.grad))
    torch.testing.assert_close(grads[len(pairs):], grads[:len(pairs)], equal_nan=True)


@pytest.mark.parametrize("which", [0, 1])
def test_a_saved_input_updated_after_a_split_is_checked_only_by_the_outputs_that_need_it(which):
    # fuzz seed 8085: the segment before the masked store saved x for a's gradient; the loss uses only b, so eager's
    # node that saved x never runs and nothing raises, while a loss using a raises eager's error
    def f(x, w):
        a = x * w
        b = w * 2
        x[x > 0] = 0
        return a, b

    outcomes = []
    for fn in (f, thunder.jit(f)):
        w = torch.ones(3, requires_grad=True)
        out = fn(torch.tensor([1.0, -1.0, 2.0]), w)
        try:
            out[which].sum().backward()
            outcomes.append(w.grad.tolist())
        except RuntimeError as error:
            outcomes.append(str(error))
    assert outcomes[0] == outcomes[1]


def test_create_graph_gives_eagers_first_order_gradients_and_refuses_the_second_backward():
    # the gradient requires grad as eager's does, through a node that raises thunder's reason when a second backward
    # reaches it: never a gradient silently cut off from its input (it read requires_grad=False)
    def f(x):
        return (x.sin() * x).sum()

    x = torch.randn(3, requires_grad=True)
    (expected,) = torch.autograd.grad(f(x), x, create_graph=True)
    (g,) = torch.autograd.grad(thunder.jit(f)(x), x, create_graph=True)
    torch.testing.assert_close(g, expected)
    assert g.requires_grad and expected.requires_grad
    with pytest.raises(RuntimeError, match="differentiating the gradient of a jitted function"):
        g.sum().backward()
    (g,) = torch.autograd.grad(thunder.jit(f)(x), x)
    torch.testing.assert_close(g, expected.detach())
    assert not g.requires_grad


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_a_saved_tensor_updated_after_a_split_names_its_type_as_eager_does(dtype):
    # fuzz seed 328326: eager names bfloat16 (no legacy tensor type) "CPUBFloat16Type", float16 "torch.HalfTensor"
    def f(t0, t1, t2):
        v1 = t0 / t1
        t2[t2 > 0] = 0
        t1.floor_()
        return (v1 * v1).sum()

    messages = []
    for fn in (f, thunder.jit(f)):
        t0 = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            fn(t0, torch.rand(2, 3).to(dtype) + 1, torch.randn(2, 2)).backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_an_unused_output_with_an_infinite_derivative_leaves_the_gradient_finite(cache):
    # fuzz seed 342485: the loss uses b only; a's zero cotangent times sqrt's infinite derivative at 0 made NaN in
    # thunder's backward, where eager's engine never runs a's branch
    def f(x):
        v = torch.nan_to_num(x.log())
        a = torch.sqrt(torch.abs(v))
        return a, v * 2

    grads = []
    for fn in (f, thunder.jit(f, cache=cache)):
        x = torch.tensor([1.0, 2.0, -1.0], requires_grad=True)
        fn(x)[1].sum().backward()
        grads.append(x.grad)
    eager_grad, thunder_grad = grads
    assert eager_grad.isfinite().all()
    torch.testing.assert_close(thunder_grad, eager_grad, rtol=0, atol=0)
    # == cannot tell -0.0 from 0.0; eager's last entry is -0.0
    assert thunder_grad.signbit().tolist() == eager_grad.signbit().tolist()


# ops whose gradient rule adds into a zero buffer in place (scatter_add_, index_add_, index_put_ accumulating)
_STORING_GRADIENTS = {
    "max.values": lambda v: v.max(1).values,
    "min": lambda v: v.min(-1)[0],
    "amax": lambda v: v.amax(1),
    "gather": lambda v: v.gather(1, torch.tensor([[1, 0, 1]])),
    "index_select": lambda v: v.index_select(1, torch.tensor([0, 0, 2])),
    "index_tensor": lambda v: v[:, torch.tensor([0, 2, 2])],
    "take_along_dim": lambda v: torch.take_along_dim(v, torch.tensor([[2, 1]]), 1),
    "getitem_int": lambda v: v[:, 1],
}


@pytest.mark.parametrize("op", list(_STORING_GRADIENTS))
@pytest.mark.parametrize("used", [0, 1])
def test_a_gradient_stored_into_a_buffer_survives_an_unused_outputs_zero(op, used):
    # fuzz seed 434795: the view v's cotangent is added to the buffer max's rule scatters into. With v unused the
    # backward specialized for its zero took the store (no outputs) for no cotangent, so "zero + buffer" was a
    # zero and max's gradient was lost (std's alone remained)
    fn = _STORING_GRADIENTS[op]

    def f(x):
        v = x[None, 1:]
        return v, v.std(-1).sum() - fn(v).sum()

    grads = []
    for g in (f, thunder.jit(f)):
        (x,) = _leaves((4,))
        g(x)[used].sum().backward()
        grads.append(x.grad)
    torch.testing.assert_close(grads[1], grads[0])


def test_an_unused_outputs_zero_drops_the_store_of_its_gradient_and_its_buffer():
    # the zero a store adds leaves its zero buffer zero: the store, the buffer and its index are not computed
    def f(x):
        v = x[None, 1:]
        return v.max(1).values, v.std(-1) * 2

    (x,) = _leaves((4,))
    (xe,) = _clone_leaves([x])
    _, b = thunder.jit(f)(x)
    b.sum().backward()
    f(xe)[1].sum().backward()
    torch.testing.assert_close(x.grad, xe.grad)
    ((run, zeros),) = b.grad_fn._forward_cls.compiled.specialized.values()
    (trace,) = (t for k, t in b.grad_fn._forward_cls.compiled.specialized_traces.items() if k is not None)
    assert not zeros and "scatter_add_" not in str(trace) and "unsqueeze" not in str(trace)


def _saved_then_updated_chunk(x, y):
    a, b = x.chunk(2)  # x's gradient is cat([a's, b's]): the zero of a's mixes with b's
    c = torch.maximum(a, y) * 2
    y.add_(1)
    return c, b * 2


def _saved_then_updated(x, y):
    c = torch.maximum(x[:2], y) * 2
    y.add_(1)
    return c, x * 2  # x's gradient is a sum returned


def _saved_then_updated_across_a_split(x, y):
    c = torch.maximum(x[:2], y) * 0.5
    y.add_(1)
    y[y > 0].sum()  # a split: c is handed to the last segment, which returns it as it is
    return c, x.sin()


def _saved_then_updated_used_after_a_split(x, y):
    c = torch.maximum(x[:2], y) * 0.5
    y.add_(1)
    y[y > 0].sum()  # a split: the last segment's backward gives c no gradient when the loss does not use c * 2
    return c * 2, x.sin()


@pytest.mark.parametrize("f", [_saved_then_updated_chunk, _saved_then_updated, _saved_then_updated_across_a_split,
                               _saved_then_updated_used_after_a_split])
def test_a_saved_tensor_updated_only_on_an_unused_outputs_path_raises_only_when_the_backward_reaches_it(f):
    # fuzz seed 433980: maximum saved y, updated later; the loss does not use maximum's output, so eager's backward
    # never reaches its node. Thunder's backward specialized for that output's zero cotangent kept eager's error
    # where the zero was summed into a gradient it returns, or into a buffer it writes again (out=), or mixed into
    # a cat with the used cotangent. Across a split, the engine ran the first segment's node although the last one
    # gave it no gradient (the zero PyTorch materialized for it reached the error)
    outcomes = []
    for g in (f, thunder.jit(f)):
        x = torch.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True)
        y = torch.tensor([0.5, 4.0])
        out = g(x, y)
        out[1].sum().backward(retain_graph=True)
        grad = x.grad.clone()
        with pytest.raises(RuntimeError) as info:  # the other output now: eager's error
            out[0].sum().backward()
        outcomes.append((grad, str(info.value)))
    torch.testing.assert_close(outcomes[1][0], outcomes[0][0])
    assert outcomes[1][1] == outcomes[0][1]


class _CountingIdentity(torch.autograd.Function):
    calls = 0

    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        _CountingIdentity.calls += 1
        return g


@pytest.mark.parametrize("f", [
    lambda x, w: (w * x.argmax()).sum(),
    lambda x, w: (x, (w * 2).sum()),
    lambda x, w: (w * x.shape[0]).sum(),
    lambda x, w: (torch.where(x > 0, w, 0.0).sum()),
], ids=["argmax", "handed_on", "size", "mask"])
def test_an_input_the_backward_never_differentiates_is_no_edge_of_the_node(f):
    # eager's graph has no edge from the loss to what made x: its node never runs and x.grad stays None. Thunder's
    # node took x as an input: the engine ran the node that made x with a zero it materialized
    seen = []
    for g in (f, thunder.jit(f)):
        _CountingIdentity.calls = 0
        x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        w = torch.tensor([0.5, 4.0, 1.0], requires_grad=True)
        made = _CountingIdentity.apply(x)
        out = g(made, w)
        if isinstance(out, tuple):
            assert out[0] is made
            out = out[1]
        out.backward()
        seen.append((_CountingIdentity.calls, x.grad, w.grad))
    assert seen[1][0] == seen[0][0] == 0
    assert seen[1][1] is None and seen[0][1] is None
    torch.testing.assert_close(seen[1][2], seen[0][2])


BACKWARD_INSIDE = {
    "autograd_grad": lambda x: torch.autograd.grad((x ** 2).sum(), x)[0] * 2,
    "autograd_backward": lambda x: torch.autograd.backward((x ** 2).sum()),
    "tensor_backward": lambda x: (x ** 2).sum().backward(),
}


@pytest.mark.parametrize("name", sorted(BACKWARD_INSIDE))
def test_a_backward_inside_the_jitted_function_is_refused_by_name(name):
    # eager's engine ran on the proxies and raised that the input was not used in the graph
    with pytest.raises(UnsupportedError, match="inside a jitted function is not supported.*outputs, outside it"):
        thunder.jit(BACKWARD_INSIDE[name])(torch.randn(3, requires_grad=True))


def _infinite_derivative_unused(t):
    unused = torch.mm(t, t.t()).var(1, keepdim=True)  # one element: the derivative is inf * 0
    return t + 1, unused


def _infinite_derivative_unused_across_a_split(t):
    unused = torch.mm(t, t.t()).var(1, keepdim=True)
    shifted = t + 1
    result = shifted + 1 if shifted.sum() > 0 else shifted - 1  # a read: the call is split here
    return result, unused


@pytest.mark.parametrize("fn", [_infinite_derivative_unused, _infinite_derivative_unused_across_a_split])
def test_an_unused_output_with_an_infinite_derivative_leaves_no_nan_in_the_gradient(fn):
    # eager's engine never runs the nodes only the unused output reaches; thunder's zero cotangent times inf was NaN
    grads, outs = [], []
    for f in (fn, thunder.jit(fn)):
        t = torch.ones(1, 1, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # var's degrees of freedom
            out = f(t)
            out[0].sum().backward()
        grads.append(t.grad)
        outs.append(out)
    assert grads[0] is not None
    torch.testing.assert_close(grads[1], grads[0])
    torch.testing.assert_close(outs[1], outs[0], equal_nan=True)  # the unused output: var of one element is NaN


# fuzz seed 520255: the used output's gradient reaches the input as a value the zero term's sum cannot be read as (a
# cotangent reshaped, expanded, transposed or masked: it may alias what the backward reads), so the zero term over a
# division by zero was computed (0 / 0)
_USED_GRADIENT_PASSED_ON = {
    "clamp": lambda t: t.clamp(max=1), "index_none": lambda t: t[None], "sum": lambda t: t.sum(0),
    "expand": lambda t: t.expand(2, *t.shape), "transpose": lambda t: t.t(), "relu": torch.relu,
}


@pytest.mark.parametrize("name", sorted(_USED_GRADIENT_PASSED_ON))
def test_a_segments_unused_output_over_a_zero_division_leaves_no_nan_in_the_gradient(name):
    used = _USED_GRADIENT_PASSED_ON[name]

    def f(t0, t1):
        v0 = t0 / t1  # inf where t1 is False; handed over to the segment after the read, unused there
        v1 = used(t0)  # its gradient and v0's meet in the first segment's backward
        n = v0.unique().numel()  # a size read from data: the program runs as segments
        return v1 * 2, n

    grads, outs = [], []
    for fn in (f, thunder.jit(f)):
        t0 = torch.tensor([[1.5, -2.0], [0.5, 3.0], [-1.0, 2.5]], requires_grad=True)
        out = fn(t0, torch.tensor([True, False]))
        out[0].sum().backward()
        grads.append(t0.grad)
        outs.append(out)
    assert grads[0].isfinite().all()
    torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=0)
    torch.testing.assert_close(outs[1], outs[0], rtol=0, atol=0)  # the product and the count


def _retains(x):
    y = x * 2
    y.retain_grad()
    return (y * y).sum()


def _hooks_intermediate(x):
    y = x * 2
    y.register_hook(lambda g: g * 3)
    return (y * y).sum()


def _hooks_input(x):
    x.register_hook(lambda g: g * 3)
    return (x * x).sum()


def _hooks_accumulation(x):
    x.register_post_accumulate_grad_hook(lambda t: None)
    return x.sum()


@pytest.mark.parametrize("fn", [_retains, _hooks_intermediate, _hooks_input, _hooks_accumulation],
                         ids=["retain_grad", "register_hook on an intermediate", "register_hook on an input",
                              "register_post_accumulate_grad_hook"])
def test_autograd_hooks_inside_are_refused_with_the_line_or_raise_eagers_error(fn):
    # eager's hook would see the gradient of one tensor inside the function; thunder's backward is one node. Where
    # the tensor needs no grad, eager's own error
    name = fn.__name__
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(UnsupportedError, match=r"Tensor\.\w+\(\) inside a jitted function.*test_autograd.py:\d+"):
        thunder.jit(fn)(x)
    for grad_mode in (True, False):
        inputs = torch.ones(3) if grad_mode else x  # under no_grad, an intermediate needs no grad either
        if not grad_mode and fn in (_hooks_input, _hooks_accumulation):
            continue  # (a hook on a leaf that requires grad is registered under no_grad too: refused above)
        with torch.set_grad_enabled(grad_mode):
            with pytest.raises(RuntimeError) as eager:
                fn(inputs)
            with pytest.raises(RuntimeError) as got:
                thunder.jit(fn)(inputs)
        assert type(got.value) is type(eager.value) and str(got.value) == str(eager.value), name


def _sin_times(x, w):
    return (x.sin() * x * w).sum()


def _grad_of_grad_wrt_the_same_input(fn, x, w):
    (g,) = torch.autograd.grad(fn(x, w), x, create_graph=True)
    return torch.autograd.grad(g.sum(), x)


def _grad_of_grad_wrt_another_input(fn, x, w):  # x's gradient depends on w
    (g,) = torch.autograd.grad(fn(x, w), x, create_graph=True)
    return torch.autograd.grad(g.sum(), w)


def _backward_creating_graph_then_backward(fn, x, w):
    fn(x, w).backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    return x.grad


def _functional_hessian(fn, x, w):  # grad(..., allow_unused=True): an unconnected gradient would read as zeros
    return torch.autograd.functional.hessian(lambda x: fn(x, w), x.detach())


def _gradient_penalty(fn, x, w):
    (g,) = torch.autograd.grad(fn(x, w), x, create_graph=True)
    (g.norm() - 1).pow(2).backward()
    return w.grad


DOUBLE = [_grad_of_grad_wrt_the_same_input, _grad_of_grad_wrt_another_input,
          _backward_creating_graph_then_backward, _functional_hessian, _gradient_penalty]


@pytest.mark.parametrize("how", DOUBLE, ids=lambda f: f.__name__.strip("_"))
def test_a_second_differentiation_of_a_jitted_gradient_is_refused_naming_the_users_line(how):
    # eager computes a higher-order gradient; thunder's backward is not itself differentiated: its own error, with the
    # line that asked for the first gradient, never torch's "appears to not have been used in the graph" nor zeros
    x, w = torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True)
    how(_sin_times, x, w)  # eager runs it
    with pytest.raises(UnsupportedError, match="differentiating the gradient of a jitted function") as raised:
        how(thunder.jit(_sin_times), torch.randn(3, requires_grad=True), torch.randn(3, requires_grad=True))
    assert "test_autograd.py" in str(raised.value) and "create_graph=True" in str(raised.value)


def test_create_graph_with_an_input_made_by_an_op_is_refused_at_once():
    leaf = torch.randn(3, requires_grad=True)
    with pytest.raises(UnsupportedError, match="made by an op") as raised:
        torch.autograd.grad(thunder.jit(_sin_times)(leaf * 2, leaf), leaf, create_graph=True)
    assert "leaf * 2" in str(raised.value)  # the user's line
