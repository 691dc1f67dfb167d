"""torch.cond under thunder.jit: branches are the user's callables, translated while tracing."""

import pytest
import torch

import thunder


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
