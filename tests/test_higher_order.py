"""torch.cond under thunder.jit: branches are the user's callables, translated while tracing."""

import re
import warnings

import pytest
import torch

import thunder
from thunder.frontend.higher_order import FunctionBackwardNotTraced


def test_cond_with_a_predicate_known_while_tracing():
    # seed 001: a shape comparison picks the branch; the prologue's shape check keeps it right
    def f(x):
        return torch.cond(x.shape[0] > 4, lambda x: x.cos(), lambda x: x.sin(), (x,))

    jf = thunder.jit(f)
    for rows in (5, 3, 5):
        x = torch.randn(rows, 2)
        torch.testing.assert_close(jf(x), f(x))
    assert thunder.cache_misses(jf) == 2


def test_cond_with_a_tensor_predicate_values_and_gradients():
    def g(x, y):
        return torch.cond(x.sum() > 0, lambda a, b: a * b + 1, lambda a, b: a - b, (x, y))

    jg = thunder.jit(g)
    for sign in (1.0, -1.0):
        x = torch.full((3,), sign, requires_grad=True)
        y = torch.randn(3)
        jg(x, y).sum().backward()
        jit_grad, x.grad = x.grad, None
        torch.testing.assert_close(jg(x, y), g(x, y))
        g(x, y).sum().backward()
        torch.testing.assert_close(jit_grad, x.grad)
    assert thunder.cache_misses(jg) == 1  # one program serves both outcomes


def test_cond_branches_must_match_like_pytorch():
    def h(x):
        return torch.cond(x.sum() > 0, lambda x: x, lambda x: x[:1], (x,))

    with pytest.raises(Exception, match="same structure and tensor metadata"):
        thunder.jit(h)(torch.ones(3))


SCALE = 2.0


def test_jitted_functions_and_modules_called_from_jitted_code_are_inlined():
    global SCALE
    inner = thunder.jit(lambda x: x.sin() * SCALE)
    linear = torch.nn.Linear(3, 3)
    jlinear = thunder.jit(linear)

    def outer(x):
        return inner(x) + jlinear(x)

    jouter = thunder.jit(outer)
    x = torch.randn(2, 3)
    torch.testing.assert_close(jouter(x), outer(x))
    assert "torch.sin(" in str(thunder.last_traces(jouter)[-1])  # inlined, not an opaque call
    with torch.no_grad():
        linear.weight.mul_(2)  # the inner module's parameters are reached by provenance, not copied
    try:
        SCALE = 5.0  # so are the inner function's globals
        torch.testing.assert_close(jouter(x), outer(x))
    finally:
        SCALE = 2.0


class _Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x**3 * scale

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        # deliberately not the true derivative: the test sees that the user's backward ran
        return (grad * 100 * x if ctx.needs_input_grad[0] else None), None


def test_autograd_function_uses_the_users_backward():
    def f(x):
        return _Cube.apply(x.sin(), 2.0).sum()

    x = torch.randn(3, requires_grad=True)
    jf = thunder.jit(f)
    out = jf(x)
    out.backward()
    jit_grad, x.grad = x.grad, None
    expected = f(x)
    expected.backward()
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(jit_grad, x.grad)
    assert "torch.pow(" in str(thunder.last_traces(jf)[-1])  # the user's forward, traced into the computation
    assert "torch.mul(t" in str(thunder.last_backward_traces(jf)[-1])  # the user's backward, traced
    assert ", 100)" in str(thunder.last_backward_traces(jf)[-1])
    with torch.no_grad():  # needs_input_grad is honoured: no grad, no backward
        torch.testing.assert_close(jf(x), f(x))


def _saved_bytes(fn, *args):
    total = [0]

    def pack(t):
        total[0] += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(*args)
    return out, total[0]


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_recomputes_instead_of_saving(use_reentrant):
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64))

    def with_checkpoint(x):
        return checkpoint(block, x, use_reentrant=use_reentrant).sum()

    def without(x):
        return block(x).sum()

    x = torch.randn(32, 64, requires_grad=True)
    out, saved_with = _saved_bytes(thunder.jit(with_checkpoint), x)
    expected, saved_without = _saved_bytes(thunder.jit(without), x)
    torch.testing.assert_close(out, expected)
    assert saved_with < saved_without / 4  # activations are recomputed in backward, not kept
    out.backward()
    jit_grads = [x.grad] + [p.grad for p in block.parameters()]
    x.grad = None
    block.zero_grad(set_to_none=True)
    without(x).backward()
    for got, want in zip(jit_grads, [x.grad] + [p.grad for p in block.parameters()]):
        torch.testing.assert_close(got, want)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_of_a_module_whose_input_needs_no_grad(use_reentrant):
    """The parameters read inside get their gradients (no argument of the checkpoint requires grad: the first block
    of a model, fed token embeddings that do not require grad); they were left without before."""
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    block, head = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)

    def f(x):
        return head(checkpoint(block, x, use_reentrant=use_reentrant)).sum()

    x = torch.randn(2, 4)
    f(x).backward()
    expected = [p.grad for p in (*block.parameters(), *head.parameters())]
    block.zero_grad(set_to_none=True)
    head.zero_grad(set_to_none=True)
    thunder.jit(f)(x).backward()
    for got, want in zip([p.grad for p in (*block.parameters(), *head.parameters())], expected, strict=True):
        torch.testing.assert_close(got, want)


def test_loop_operators_forward():
    from torch._higher_order_ops import associative_scan, scan, while_loop
    from torch._higher_order_ops import map as hop_map

    xs, y = torch.randn(4, 3), torch.randn(3)

    def mapped(xs, y):
        return hop_map(lambda x, y: x.sin() + y, xs, y)

    torch.testing.assert_close(thunder.jit(mapped)(xs, y), mapped(xs, y))

    def scanned(init, xs):
        return scan(lambda carry, x: (carry + x, (carry * x).sum(-1)), init, xs)

    init = torch.zeros(3)
    for got, want in zip(thunder.jit(scanned)(init, xs), scanned(init, xs)):
        torch.testing.assert_close(got, want)

    def prefix_sums(xs):
        return associative_scan(lambda a, b: a + b, xs, 0, combine_mode="generic")

    torch.testing.assert_close(thunder.jit(prefix_sums)(xs), prefix_sums(xs))

    def doubled_until(i, x):
        return while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x * 2), (i, x))

    i0, x0 = torch.tensor(0), torch.ones(2)
    for got, want in zip(thunder.jit(doubled_until)(i0, x0), doubled_until(i0, x0)):
        torch.testing.assert_close(got, want)


def test_jit_option_checkpoints_chosen_submodules():
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mlp = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.GELU(), torch.nn.Linear(128, 32))

        def forward(self, x):
            return x + self.mlp(x)

    model = torch.nn.Sequential(Block(), Block())
    x = torch.randn(16, 32, requires_grad=True)
    plain = thunder.jit(model)
    checkpointed = thunder.jit(model, checkpoint=Block)
    out, saved_plain = _saved_bytes(lambda x: plain(x).sum(), x)
    out_ckpt, saved_ckpt = _saved_bytes(lambda x: checkpointed(x).sum(), x)
    torch.testing.assert_close(out_ckpt, out)
    assert saved_ckpt < saved_plain / 4
    out_ckpt.backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    model(x).sum().backward()
    for got, p in zip(grads, model.parameters()):
        torch.testing.assert_close(got, p.grad)
    with pytest.raises(TypeError, match="checkpoint= expects"):
        thunder.jit(model, checkpoint=3)


def test_cond_runs_only_the_taken_branch_and_shows_both():
    torch.manual_seed(0)
    linear = torch.nn.Linear(3, 3)

    def g(x):
        return torch.cond(x.sum() > 0, lambda a: linear(a), lambda a: a * 2, (x,))

    jg = thunder.jit(g)
    x = (-torch.ones(3)).requires_grad_()
    jg(x).sum().backward()
    jit_grads = [x.grad, linear.weight.grad, linear.bias.grad]
    x.grad = None
    linear.zero_grad(set_to_none=True)
    g(x).sum().backward()
    # the untaken branch's parameters get zeros, as eager's torch.cond gives them
    for got, want in zip(jit_grads, [x.grad, linear.weight.grad, linear.bias.grad]):
        torch.testing.assert_close(got, want)
    final = str(thunder.last_traces(jg)[-1])
    # the branches are nested functions of the printed program, which the cond call receives
    assert "def true_branch_forward(" in final and "def false_branch_forward(" in final
    assert "higher_order.cond(t" in final and "true_branch_forward, false_branch_forward" in final
    assert "island" not in final and "torch_autograd" not in final  # differentiated by thunder, not PyTorch
    backward = str(thunder.last_backward_traces(jg)[-1])
    assert "def true_branch_backward(" in backward and "torch.matmul" in backward


def _grads_match(fn, inputs, params=(), reference=None):
    """Outputs and gradients of thunder.jit(fn) equal eager's (of ``reference``, when given)."""
    reference = reference or fn
    jfn = thunder.jit(fn)
    out = jfn(*inputs)
    torch.testing.assert_close(out, reference(*inputs))
    out.sum().backward()
    leaves = [t for t in (*inputs, *params) if t.requires_grad]
    got = [t.grad for t in leaves]
    for t in leaves:
        t.grad = None
    reference(*inputs).sum().backward()
    for g, t in zip(got, leaves):
        torch.testing.assert_close(g, t.grad)
        t.grad = None
    return jfn


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_gradients_through_thunders_autograd(sign):
    torch.manual_seed(0)
    linear = torch.nn.Linear(3, 3)

    def f(x, y):
        # the parameter is read in a branch and outside
        out = torch.cond(x.sum() * sign > 0, lambda a, b: linear(a).tanh() * b, lambda a, b: a.exp() - b, (x, y))
        return out + linear(y)

    x, y = torch.randn(2, 3, requires_grad=True), torch.randn(2, 3, requires_grad=True)
    _grads_match(f, (x, y), linear.parameters())

    def passthrough(x, y):  # a branch returning an operand as it is (eager's torch.cond refuses the aliasing)
        out = torch.cond(x.sum() * sign > 0, lambda a, b: (a * b, a), lambda a, b: (a.exp(), b), (x, y))
        return out[0] + out[1]

    def reference(x, y):
        return x * y + x if (x.sum() * sign > 0) else x.exp() + y

    _grads_match(passthrough, (x, y), reference=reference)


def test_nested_cond_and_no_grad():
    def f(x):
        return torch.cond(x.sum() > 0,
                          lambda a: torch.cond(a.mean() > 1, lambda b: b * 3, lambda b: b.sin(), (a,)),
                          lambda a: a.cos(), (x,))

    for value in (2.0, 0.5, -1.0):
        jf = _grads_match(f, (torch.full((3,), value, requires_grad=True),))
    assert thunder.cache_misses(jf) == 1
    with torch.no_grad():
        torch.testing.assert_close(jf(torch.full((3,), 2.0)), f(torch.full((3,), 2.0)))


def test_transforms_visit_the_branches_and_the_printed_program_runs():
    def f(x):
        def true_fn(a):
            unused = a.exp()  # noqa: F841  dead code inside a branch
            return a.sin() + a.sin()  # a common subexpression inside a branch

        def false_fn(a):
            b = a.clone()
            b.mul_(2)  # an in-place update of a branch's own value: functionalized inside the branch
            return b

        return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))

    jf = thunder.jit(f)
    for x in (torch.ones(3), -torch.ones(3)):
        torch.testing.assert_close(jf(x), f(x))
    final = thunder.last_traces(jf)[-1]
    text = str(final)
    assert "torch.exp" not in text  # DCE inside the branch
    assert text.count("torch.sin(") == 1  # CSE inside the branch
    assert "torch.Tensor.mul_" not in text and "torch.mul(" in text  # functionalized
    namespace = {}
    exec(compile(text, "printed", "exec"), namespace)  # the printed trace is the program: it runs as printed
    torch.testing.assert_close(namespace["computation"](-torch.ones(3)), f(-torch.ones(3)))


def test_cond_branches_must_not_update_their_inputs():
    def f(x):
        return torch.cond(x.sum() > 0, lambda a: a.add_(1), lambda a: a * 2, (x,))

    with pytest.raises(Exception, match="must not update its inputs"):
        thunder.jit(f)(torch.ones(3))


class _ScaledMatmul(torch.autograd.Function):
    """Two outputs, a tensor kept as a ctx attribute, needs_input_grad consulted, a None gradient."""

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.save_for_backward(a, b)
        ctx.alpha, ctx.bias_like = alpha, b.sum(0)
        out = a @ b
        return out * alpha, out.relu()

    @staticmethod
    def backward(ctx, g_scaled, g_relu):
        a, b = ctx.saved_tensors
        g = g_scaled * ctx.alpha + g_relu * ((a @ b) > 0)
        grad_a = g @ b.t() + ctx.bias_like.sum() if ctx.needs_input_grad[0] else None
        grad_b = a.t() @ g if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None


@pytest.mark.parametrize("b_requires_grad", [True, False])
def test_autograd_function_forward_and_backward_traced(b_requires_grad):
    def f(a, b):
        scaled, relu = _ScaledMatmul.apply(a.tanh(), b, 0.5)
        return scaled + relu

    a = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(3, 5, requires_grad=b_requires_grad)
    jf = _grads_match(f, (a, b))
    backward = str(thunder.last_backward_traces(jf)[-1])
    assert "torch.matmul" in backward and "island" not in backward and "torch_autograd" not in backward


class _Untraceable(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        scale = float(g.sum().item() != 12345)  # needs a value: thunder cannot trace it
        return g * 2 * scale


def test_autograd_function_with_an_untraceable_backward_runs_under_pytorch():
    def f(x):
        return _Untraceable.apply(x.sin())

    x = torch.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="_Untraceable.backward could not be traced"):
        _grads_match(f, (x,))


class _ScaledProduct(torch.autograd.Function):
    """PyTorch's recommended form: forward without ctx, setup_context(ctx, inputs, output) saving for backward,
    a ctx attribute, a second output marked non-differentiable, needs_input_grad consulted."""

    @staticmethod
    def forward(x, y, alpha):
        out = x * y * alpha
        return out, (out > 0).to(out.dtype)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, y, alpha = inputs
        ctx.save_for_backward(x, y)
        ctx.alpha = alpha
        ctx.mark_non_differentiable(output[1])

    @staticmethod
    def backward(ctx, g, g_mask):
        x, y = ctx.saved_tensors
        assert g_mask is not None  # materialized: zeros for the non-differentiable output, as eager passes
        return (g * y * ctx.alpha * 10 if ctx.needs_input_grad[0] else None,  # x10: the user's backward ran
                g * x * ctx.alpha if ctx.needs_input_grad[1] else None, None)


@pytest.mark.parametrize("y_requires_grad", [False, True])
def test_autograd_function_with_setup_context(y_requires_grad):
    def f(x, y):
        out, mask = _ScaledProduct.apply(x.sin(), y, 3.0)
        return out, mask

    x = torch.randn(5, requires_grad=True)
    y = torch.randn(5, requires_grad=y_requires_grad)
    jf = thunder.jit(f)
    (out, mask), (e_out, e_mask) = jf(x, y), f(x, y)
    torch.testing.assert_close((out, mask), (e_out, e_mask))
    assert (out.requires_grad, mask.requires_grad) == (e_out.requires_grad, e_mask.requires_grad) == (True, False)
    leaves = [x, y] if y_requires_grad else [x]
    for got, expected in zip(torch.autograd.grad(out.sum(), leaves), torch.autograd.grad(e_out.sum(), leaves)):
        torch.testing.assert_close(got, expected)
    assert re.search(r"mul\(\w+, 10\b", str(thunder.last_backward_traces(jf)[-1]))  # the user's backward, traced


def test_mark_non_differentiable_in_the_ctx_form():
    class ArgmaxAndMax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.max(dim=-1)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, idx)
            return values, idx.to(x.dtype)

        @staticmethod
        def backward(ctx, g, _):
            x, idx = ctx.saved_tensors
            return torch.zeros_like(x).scatter(-1, idx.unsqueeze(-1), g.unsqueeze(-1))

    def f(x):
        return ArgmaxAndMax.apply(x * 2)

    x = torch.randn(3, 4, requires_grad=True)
    (values, idx), (e_values, e_idx) = thunder.jit(f)(x), f(x)
    torch.testing.assert_close((values, idx), (e_values, e_idx))
    assert idx.requires_grad == e_idx.requires_grad  # the float output was not marked: both require grad
    torch.testing.assert_close(torch.autograd.grad(values.sum(), x), torch.autograd.grad(e_values.sum(), x))


class _Exp(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)  # an output saved for backward

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out * 3  # x3: the user's backward ran


class _Linear(torch.autograd.Function):
    @staticmethod
    def forward(x, w, b=None):
        y = x @ w.t()
        return y if b is None else y + b

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, w, b = inputs  # PyTorch fills in defaults and makes keyword arguments positional
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, g.t() @ x, g.sum(0) if ctx.has_bias else None


def test_setup_context_with_defaults_keywords_and_once_differentiable():
    def f(x, w, b):
        return _Exp.apply(_Linear.apply(x, w, b=b)).sum() + _Linear.apply(x, w).sum()

    x, w, b = torch.randn(4, 3, requires_grad=True), torch.randn(2, 3, requires_grad=True), torch.randn(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FunctionBackwardNotTraced)  # every backward is traced
        jf = _grads_match(f, (x, w, b))
    assert re.search(r"mul\(\w+, 3\b", str(thunder.last_backward_traces(jf)[-1]))  # _Exp's backward, traced


class _UntraceableSetupContext(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.scale = 2

    @staticmethod
    def backward(ctx, g):
        keep = float(g.sum().item() != 12345)  # needs a value: thunder cannot trace it
        return g * ctx.scale * keep


def test_setup_context_function_with_an_untraceable_backward_runs_under_pytorch():
    x = torch.randn(3, requires_grad=True)
    with pytest.warns(UserWarning, match="_UntraceableSetupContext.backward could not be traced"):
        _grads_match(lambda x: _UntraceableSetupContext.apply(x.sin()), (x,))


@pytest.mark.parametrize("reverse", [False, True])
def test_long_loops_run_their_body_sub_trace_in_a_loop(reverse):
    from torch._higher_order_ops import map as hop_map
    from torch._higher_order_ops import scan

    from thunder.frontend.higher_order import UNROLL_LIMIT

    torch.manual_seed(0)
    n = UNROLL_LIMIT * 4
    xs, y = torch.randn(n, 3, requires_grad=True), torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)

    def mapped(xs, y):
        return hop_map(lambda x, y: x.sin() + y * w, xs, y)

    jm = _grads_match(mapped, (xs, y), (w,))

    def scanned(init, xs):
        carry, ys = scan(lambda c, x: (c * w + x, (c * x).sum(-1)), init, xs, reverse=reverse)
        return ys.sum() + carry.sum()

    init = torch.zeros(3, requires_grad=True)
    _grads_match(scanned, (init, xs), (w,))
    with torch.no_grad():  # the body traced once, run by the loop: the printed program has one body
        jm(xs, y)
        text = str(thunder.last_traces(jm)[-1])
    assert "def map_body(" in text and text.count("torch.sin(") == 1 and "higher_order.scan(map_body" in text


def test_while_loop_body_and_cond_are_sub_traces_and_misuse_is_reported():
    from torch._higher_order_ops import while_loop

    def f(i, x):
        return while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x * 2), (i, x))

    jf = thunder.jit(f)
    for i0 in (0, 3, 7):
        for got, want in zip(jf(torch.tensor(i0), torch.ones(2)), f(torch.tensor(i0), torch.ones(2))):
            torch.testing.assert_close(got, want)
    text = str(thunder.last_traces(jf)[-1])
    assert "def while_cond(" in text and "def while_body(" in text
    assert "higher_order.while_loop(while_cond, while_body" in text

    def grows(x):
        return while_loop(lambda x: x.sum() < 5, lambda x: (torch.cat([x, x]),), (x,))

    with pytest.raises(Exception, match=r"while_loop: the body's result must keep .*test_higher_order.py"):
        thunder.jit(grows)(torch.ones(2))

    def float_cond(x):
        return while_loop(lambda x: x.sum(), lambda x: (x * 2,), (x,))

    with pytest.raises(Exception, match="while_loop: the cond function must return a boolean tensor"):
        thunder.jit(float_cond)(torch.ones(2))


def test_scan_misuse_names_the_operator_and_the_line():
    from torch._higher_order_ops import scan

    def bad(init, xs):
        return scan(lambda c, x: (c.sum(), x), init, xs)

    with pytest.raises(Exception, match=r"scan: the carry .* must keep .*test_higher_order.py"):
        thunder.jit(bad)(torch.zeros(3), torch.randn(20, 3))


def test_docs_worked_example_a_transform_that_rewrites_inside_branches():
    from thunder.core.trace import from_trace
    from thunder.extend import get_executor

    cos = get_executor("torch").register_operator("torch.cos")

    def count_ops(trace, counts=None):
        counts = {} if counts is None else counts
        for bsym in trace.bound_symbols:
            counts[bsym.sym.name] = counts.get(bsym.sym.name, 0) + 1
            for sub in bsym.subtraces:
                count_ops(sub, counts)
        return counts

    def sin_to_cos(trace):
        new = from_trace(trace)
        for bsym in trace.bound_symbols:
            bsym = bsym.map_subtraces(sin_to_cos)
            if bsym.sym.printed_name == "torch.sin":
                bsym = bsym.replace(sym=cos)
            new.bound_symbols.append(bsym)
        return new

    def f(x):
        return torch.cond(x.sum() > 0, lambda a: a.sin() * 2, lambda a: a.cos(), (x,))

    jf = thunder.jit(f, transforms=[sin_to_cos])
    x = torch.ones(3)
    torch.testing.assert_close(jf(x), x.cos() * 2)
    counts = count_ops(thunder.last_traces(jf)[-1])
    assert counts["cos"] == 2 and "sin" not in counts and counts["cond"] == 1


def test_checkpoint_of_a_partial_holding_tensors_and_of_function_keywords():
    # transformers 4.x checkpoints partial(layer.__call__, **kwargs); the non-reentrant checkpoint also hands its
    # other keywords to the function. Their tensors are the checkpoint's inputs (gradients reach them), not constants
    import functools

    def layer(x, scale, *, shift):
        return (x * scale + shift).sin()

    def f(x, scale, shift):
        part = functools.partial(layer, scale=scale)
        return torch.utils.checkpoint.checkpoint(part, x, shift=shift, use_reentrant=False).sum()

    inputs = [torch.randn(3, requires_grad=True) for _ in range(3)]
    expected = torch.autograd.grad(f(*inputs), inputs)
    jf = thunder.jit(f)
    for step in range(2):
        actual = torch.autograd.grad(jf(*inputs), inputs)
        torch.testing.assert_close(actual, expected)
