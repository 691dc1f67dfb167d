"""Tensors kept in plain lists and tuples outside the jitted function (an attribute ``self.history = [...]``, a
global list), used whole by a torch call (``torch.stack(self.history)``) or read back after the program changed
the list (``self.history.append(h)``): each tensor the list held when the call began is an input the prologue reads
at its place, so the result follows the caller's tensors on every call, as eager's does."""

import copy

import pytest
import torch

import thunder


class History(torch.nn.Module):
    """Keeps the last ``keep`` inputs (times two) and returns what ``combine`` makes of them."""

    def __init__(self, combine, keep=2):
        super().__init__()
        self.history, self.combine, self.keep = [torch.ones(2)], combine, keep

    def forward(self, x):
        self.history.append(x * 2)
        if len(self.history) > self.keep:
            self.history.pop(0)
        return self.combine(self.history, x)


COMBINE = {
    "torch.stack of the list": lambda h, x: torch.stack(h).sum(0),
    "torch.cat of the list": lambda h, x: torch.cat(h) * 2,
    "sum() of the list": lambda h, x: sum(h),
    "first and last items": lambda h, x: h[0] - h[-1] + x,
    "a list comprehension": lambda h, x: [t * i for i, t in enumerate(h)][0] + x,
}


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("combine", COMBINE)
def test_a_list_of_tensors_the_module_appends_to_and_reads(combine, cache):
    eager = History(COMBINE[combine])
    jitted = thunder.jit(copy.deepcopy(eager), cache=cache)
    for step in range(4):
        x = torch.full((2,), float(step + 1))
        torch.testing.assert_close(jitted(x), eager(x))
        assert len(jitted._model.history) == len(eager.history)
        for a, b in zip(jitted._model.history, eager.history):
            torch.testing.assert_close(a, b)


def test_a_global_list_used_whole_follows_the_callers_tensors():
    tensors = [torch.ones(2), torch.zeros(2)]

    def f(x):
        return torch.stack(tensors).sum(0) + x

    jf = thunder.jit(f)
    for step in range(3):
        tensors[1] = torch.full((2,), float(step))  # a new tensor at the same place: no stale value
        torch.testing.assert_close(jf(torch.ones(2)), f(torch.ones(2)))
    assert thunder.cache_misses(jf) == 1


def test_a_tuple_attribute_used_whole():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pair = (torch.ones(2), torch.full((2,), 3.0))

        def forward(self, x):
            return torch.stack(self.pair).prod(0) * x

    m = M()
    jm = thunder.jit(m)
    torch.testing.assert_close(jm(torch.ones(2)), m(torch.ones(2)))
    m.pair = (torch.ones(2), torch.full((2,), 5.0))
    torch.testing.assert_close(jm(torch.ones(2)), m(torch.ones(2)))


def test_a_tensor_an_attribute_list_holds_twice_is_refused_not_guessed():
    # which of its places a later call's tensor comes from is not known (the list may hold two tensors then)
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            t = torch.ones(2)
            self.tensors = [t, t]

        def forward(self, x):
            return torch.stack(self.tensors).sum(0) + x

    with pytest.raises(thunder.core.errors.UnsupportedError, match="neither an input nor reachable"):
        thunder.jit(M())(torch.ones(2))


def _trained_grads(clip, parameters_of):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    norms = []
    for step in range(3):
        model.zero_grad()
        model(torch.randn(5, 4, generator=torch.Generator().manual_seed(step)) * (step + 1)).sum().backward()
        norms.append(clip(parameters_of(model), 0.1))
    return norms, [p.grad for p in model.parameters()]


@pytest.mark.parametrize("foreach", [None, False])
def test_clip_grad_norm_of_a_list_of_parameters(foreach):
    def clip(parameters, max_norm):
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm, foreach=foreach)

    expected = _trained_grads(clip, lambda m: list(m.parameters()))
    jclip = thunder.jit(clip)
    actual = _trained_grads(jclip, lambda m: list(m.parameters()))
    torch.testing.assert_close(actual, expected)
    assert thunder.cache_misses(jclip) == 1


def test_clip_grad_norm_of_a_generator_is_refused():
    # the generator is consumed in torch's code, natively: a later call would reuse the first call's parameters
    jclip = thunder.jit(torch.nn.utils.clip_grad_norm_)
    with pytest.raises(thunder.core.errors.UnsupportedError, match="next\\(\\) on an iterator or generator"):
        _trained_grads(jclip, lambda m: m.parameters())
