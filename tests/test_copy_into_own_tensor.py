"""``a.copy_(b)`` where both are the program's tensors (``a`` made inside, not a view): ``a`` holds ``b``'s values in
memory of its own. Functionalization renamed ``a`` to ``b``, so the call returned the caller's own tensor (or one
object twice): the caller's update of the result changed the input (silently wrong; ``torch.optim.ASGD`` then stored
a parameter as its own averaged state)."""

import copy

import pytest
import torch

import thunder

CACHES = [thunder.CACHE_OPTIONS.CONSTANT_VALUES, thunder.CACHE_OPTIONS.SYMBOLIC_VALUES]


def _copy_of_the_input(p):
    a = torch.empty_like(p)
    a.copy_(p)
    return a


def _copy_of_an_intermediate_returned_too(p):
    t = p * 2
    a = torch.zeros_like(t)
    a.copy_(t)
    return a, t


@pytest.mark.parametrize("cache", CACHES)
def test_a_copy_of_the_input_is_not_the_input(cache):
    p = torch.randn(3)
    before = p.clone()
    out = thunder.jit(_copy_of_the_input, cache=cache)(p)
    assert out is not p and out.data_ptr() != p.data_ptr()
    out.mul_(0)  # the caller's update of the result leaves the input as it was, as in eager
    torch.testing.assert_close(p, before, rtol=0, atol=0)


@pytest.mark.parametrize("cache", CACHES)
def test_a_copy_of_an_intermediate_is_its_own_tensor(cache):
    a, t = thunder.jit(_copy_of_an_intermediate_returned_too, cache=cache)(torch.randn(3))
    assert a is not t and a.data_ptr() != t.data_ptr()
    expected = t.clone()
    a.add_(1)
    torch.testing.assert_close(t, expected, rtol=0, atol=0)


def test_a_copy_stored_in_outside_state_is_its_own_tensor():
    state = {}

    def fn(p):
        a = torch.zeros_like(p)
        a.copy_(p)
        state["a"] = a
        return p * 2

    p = torch.randn(3)
    thunder.jit(fn)(p)
    assert state["a"] is not p and state["a"].data_ptr() != p.data_ptr()
    torch.testing.assert_close(state["a"], p, rtol=0, atol=0)


def test_jitted_asgd_step_keeps_its_averages_apart_from_the_parameters():
    torch.manual_seed(0)
    eager_model = torch.nn.Linear(4, 3)
    jit_model = copy.deepcopy(eager_model)
    eager_opt = torch.optim.ASGD(eager_model.parameters(), lr=0.01)
    jit_opt = torch.optim.ASGD(jit_model.parameters(), lr=0.01)
    step = thunder.jit(jit_opt.step)
    for _ in range(4):
        x = torch.randn(5, 4)
        for model in (eager_model, jit_model):
            model.zero_grad()
            model(x).pow(2).sum().backward()
        eager_opt.step()
        step()
        for p, q in zip(eager_model.parameters(), jit_model.parameters()):
            torch.testing.assert_close(q, p, rtol=0, atol=0)
    for p, q in zip(eager_model.parameters(), jit_model.parameters()):
        for key, value in eager_opt.state[p].items():
            torch.testing.assert_close(jit_opt.state[q][key], value, rtol=0, atol=0)
        assert jit_opt.state[q]["ax"].data_ptr() != q.data_ptr()
