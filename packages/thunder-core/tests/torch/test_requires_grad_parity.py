"""``requires_grad`` of every output matches eager: ops that eager does not differentiate (creation from a
tensor's metadata, comparisons, integer results, random tensors shaped like an input) give False."""

import pytest
import torch

import thunder

CASES = {
    "full_like": lambda t: torch.full_like(t.clamp(max=2), 2),
    "zeros_like": lambda t: torch.zeros_like(t),
    "ones_like_dtype": lambda t: torch.ones_like(t, dtype=torch.float64),
    "empty_like": lambda t: torch.empty_like(t).zero_(),
    "rand_like": lambda t: torch.rand_like(t) * 0,
    "randn_like": lambda t: torch.randn_like(t) * 0,
    "new_zeros": lambda t: t.new_zeros(2),
    "new_full": lambda t: t.new_full((2,), 3.0),
    "where_constants": lambda t: torch.where(t > 0, 1.0, 0.0),
    "gt": lambda t: t > 0,
    "argmax": lambda t: t.argmax(),
    "signbit": lambda t: torch.signbit(t),
    "sign": lambda t: torch.sign(t),  # differentiable in eager (zero gradient)
    "floor": lambda t: torch.floor(t),
    "mul_zero": lambda t: t * 0,
    "like_then_add": lambda t: torch.zeros_like(t) + t,
    "sum": lambda t: t.sum(),
    "diagonal": lambda t: t.diagonal(),  # its subsymbols only compute sizes: it runs as one call
    "mixed_tuple": lambda t: (torch.ones_like(t), t.exp(), t.shape[0] * torch.full_like(t, 2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_requires_grad_matches_eager(name):
    fn = CASES[name]
    t = torch.randn(2, 3, requires_grad=True)
    expected = fn(t)
    got = thunder.jit(fn)(t)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    assert [g.requires_grad for g in got] == [e.requires_grad for e in expected]
    for g, e in zip(got, expected):
        if not name.startswith(("rand", "empty")):
            torch.testing.assert_close(g.detach(), e.detach())


def test_gradient_flows_around_a_like_op():
    def fn(t):
        return (torch.ones_like(t) * t).sum()

    t = torch.randn(3, requires_grad=True)
    thunder.jit(fn)(t).backward()
    torch.testing.assert_close(t.grad, torch.ones(3))


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("op", [lambda t: t.diagonal(), lambda t: t.diagonal(0, 1, 2), lambda t: t.mT.unfold(0, 1, 1),
                                lambda t: torch.full_like(t, 2) * t])
def test_gradients_of_ops_that_run_as_one_call(op, cache):
    t = torch.randn(2, 2, 2, requires_grad=True)
    expected = op(t)
    got = thunder.jit(op, cache=cache)(t)
    assert got.requires_grad == expected.requires_grad
    g = torch.randn_like(expected)
    torch.testing.assert_close(torch.autograd.grad(got, t, g), torch.autograd.grad(expected, t, g))


def test_requires_grad__asking_for_what_the_tensor_has_is_a_no_op():
    def f(t):
        y = (t * 2).requires_grad_()  # requires grad already
        z = (t.detach() + 1).requires_grad_(False)  # does not
        return y * z

    t = torch.randn(3, requires_grad=True)
    out = thunder.jit(f)(t)
    torch.testing.assert_close(out, f(t))
    out.sum().backward()
    torch.testing.assert_close(t.grad, 2 * (t.detach() + 1))
    # a change of the flag is still refused (a trace's tensors have fixed autograd state)
    with pytest.raises(thunder.core.errors.UnsupportedError, match="requires_grad_ is not supported"):
        thunder.jit(lambda t: (t.detach() * 2).requires_grad_())(t)
