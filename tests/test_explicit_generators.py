"""A ``torch.Generator`` handed to random functions inside a jitted function is outside state, like the default
generator: each call draws what eager draws from it and leaves it in eager's state; another generator is another
entry. What thunder cannot repeat on every call is refused with the line: a generator made inside the function
(eager makes a new one on each call) and reading or changing a generator's state inside."""

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError


def draws(x, g):
    a = x + torch.rand(x.shape, generator=g)
    b = torch.randn(x.shape[0], 2, generator=g)
    c = x.clone().normal_(2.0, 0.5, generator=g)
    d = torch.randint(0, 10, (3,), generator=g)
    e = torch.empty_like(x).uniform_(-1, 1, generator=g).bernoulli_(0.5, generator=g)
    f = torch.randperm(x.shape[-1], generator=g)
    h = torch.multinomial(x.abs() + 0.1, 2, generator=g)
    k = torch.bernoulli(torch.full_like(x, 0.5), generator=g)
    n = torch.normal(x, 1.0, generator=g)
    return a, b, c, d, e, f, h, k, n


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_an_outside_generator_advances_as_in_eager(cache):
    jf = thunder.jit(draws, cache=cache)
    mine, eagers = torch.Generator().manual_seed(7), torch.Generator().manual_seed(7)
    other, other_eager = torch.Generator().manual_seed(8), torch.Generator().manual_seed(8)
    for shape, g, eg in [((3, 4), mine, eagers), ((3, 4), mine, eagers), ((5, 2), mine, eagers),
                         ((3, 4), other, other_eager), ((3, 4), mine, eagers)]:
        x = torch.randn(shape)
        default_state = torch.get_rng_state()
        got, want = jf(x, g), draws(x, eg)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and torch.equal(a, b)
        assert torch.equal(g.get_state(), eg.get_state())
        assert torch.equal(torch.get_rng_state(), default_state)  # the default generator is untouched


def test_a_generator_reached_through_an_object_is_checked_by_identity():
    class Sampler:
        def __init__(self, seed):
            self.g = torch.Generator().manual_seed(seed)

    def f(x, s):
        return x * torch.rand(x.shape, generator=s.g)

    jf, x = thunder.jit(f), torch.ones(4)
    s, es = Sampler(1), Sampler(1)
    for replace in (False, True, False):
        if replace:  # a new generator in the same place: the prologue sees another object and draws from it
            s.g, es.g = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
        assert torch.equal(jf(x, s), f(x, es)) and torch.equal(s.g.get_state(), es.g.get_state())


def test_a_grad_through_values_drawn_from_a_generator_is_eagers():
    def f(x, g):
        return (x * torch.rand(x.shape, generator=g)).sum()

    x = torch.randn(3, requires_grad=True)
    ex = x.detach().clone().requires_grad_()
    g, eg = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    jf = thunder.jit(f)
    for _ in range(2):
        jf(x, g).backward()
        f(ex, eg).backward()
    assert torch.equal(x.grad, ex.grad)


def _made_inside(x):
    g = torch.Generator().manual_seed(3)
    return x + torch.rand(x.shape, generator=g)


def _reseeded(x, g):
    g.manual_seed(3)
    return x + torch.rand(x.shape, generator=g)


def _state_read(x, g):
    state = g.get_state()
    y = torch.rand(x.shape, generator=g)
    g.set_state(state)
    return y


def _seed_read(x, g):
    return x + g.initial_seed()


@pytest.mark.parametrize("fn, what", [(_made_inside, "creating a torch.Generator inside the jitted function"),
                                      (_reseeded, "Generator.manual_seed()"), (_state_read, "Generator.get_state()"),
                                      (_seed_read, "Generator.initial_seed()")],
                         ids=["made inside", "reseeded", "state read", "seed read"])
def test_what_cannot_be_repeated_on_every_call_is_refused_with_the_line(fn, what):
    jf = thunder.jit(fn)
    args = (torch.zeros(2),) if fn is _made_inside else (torch.zeros(2), torch.Generator().manual_seed(0))
    with pytest.raises(UnsupportedError, match=rf"{what}.*test_explicit_generators.py:\d+"):
        jf(*args)
