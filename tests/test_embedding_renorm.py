"""``F.embedding(max_norm=...)`` / ``nn.Embedding(max_norm=...)``: eager renormalizes the looked-up rows of the weight
in place under no_grad before the lookup; thunder does the same update (a copy into the weight, unseen by autograd),
so outputs, the weight after each call and its gradient equal eager's."""

import copy

import pytest
import torch
import torch.nn as nn

import thunder

CACHES = [thunder.CACHE_OPTIONS.CONSTANT_VALUES, thunder.CACHE_OPTIONS.SYMBOLIC_VALUES, thunder.CACHE_OPTIONS.NO_CACHING]


@pytest.mark.parametrize("norm_type", [2.0, 1.0])
@pytest.mark.parametrize("cache", CACHES)
def test_embedding_module_with_max_norm(cache, norm_type):
    torch.manual_seed(0)
    eager = nn.Embedding(10, 3, max_norm=1.0, norm_type=norm_type)
    with torch.no_grad():
        eager.weight.mul_(3)
    jitted = copy.deepcopy(eager)
    jm = thunder.jit(jitted, cache=cache)
    for idx in (torch.tensor([1, 2, 1]), torch.tensor([[3, 4], [1, 9]]), torch.tensor([0, 5, 5])):
        expected, actual = eager(idx), jm(idx)
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
        weights = torch.arange(expected.numel(), dtype=torch.float32).reshape(expected.shape)
        (expected * weights).sum().backward()
        (actual * weights).sum().backward()
        torch.testing.assert_close(jitted.weight, eager.weight, rtol=0, atol=0)
        torch.testing.assert_close(jitted.weight.grad, eager.weight.grad, rtol=0, atol=0)


def test_functional_embedding_renormalizes_an_input_weight():
    def fn(idx, w):
        return torch.nn.functional.embedding(idx, w, max_norm=0.5, norm_type=1.0) * 2

    w_eager = torch.randn(6, 2) * 3
    w_jit = w_eager.clone()
    jfn = thunder.jit(fn)
    for idx in (torch.tensor([1, 3]), torch.tensor([3, 4, 4])):
        torch.testing.assert_close(jfn(idx, w_jit), fn(idx, w_eager), rtol=0, atol=0)
        torch.testing.assert_close(w_jit, w_eager, rtol=0, atol=0)
