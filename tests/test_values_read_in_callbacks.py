"""Values read from tensor data inside functions that builtins call back (``sorted``/``min``/``max``/``list.sort`` key
functions, ``functools.reduce``): the program is split at each read, and the keys computed before a read are still
used after it. They used to be held where the split could not see them, so a call whose values took another branch
than the first failed ("the value of f1 is not known where the program is split")."""

import functools

import pytest
import torch

import thunder

CACHES = [thunder.CACHE_OPTIONS.CONSTANT_VALUES, thunder.CACHE_OPTIONS.SYMBOLIC_VALUES, thunder.CACHE_OPTIONS.NO_CACHING]


def _sort_method(x):
    rows = list(x.unbind(0))
    rows.sort(key=lambda t: -t.sum().item())
    return torch.stack(rows)


PROGRAMS = {
    "max with an item() key": lambda x: max(x.unbind(0), key=lambda t: t.sum().item()),
    "min with a bool() key": lambda x: min(x.unbind(0), key=lambda t: bool(t[0] > 0)),
    "max over a generator": lambda x: max((t for t in x), key=lambda t: t.sum().item()) * 2,
    "sorted with an item() key": lambda x: torch.stack(sorted(x.unbind(0), key=lambda t: t.sum().item())),
    "sorted with a float() key": lambda x: torch.stack(sorted(x.unbind(0), key=lambda t: float(t.max().detach()))),
    "list.sort with a key": _sort_method,
    "reduce reading values": lambda x: functools.reduce(lambda a, b: a if a.sum().item() > b.sum().item() else b,
                                                        x.unbind(0)),
}


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_values_read_inside_key_functions_across_calls(name, cache):
    fn = PROGRAMS[name]
    jfn = thunder.jit(fn, cache=cache)
    torch.manual_seed(0)
    for _ in range(8):  # random values: the reads take other branches than the first call's
        x = torch.randn(4, 2, requires_grad=True)
        x_jit = x.detach().clone().requires_grad_()
        expected, actual = fn(x), jfn(x_jit)
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
        expected.sum().backward()
        actual.sum().backward()
        torch.testing.assert_close(x_jit.grad, x.grad, rtol=0, atol=0)


@pytest.mark.parametrize("cache", CACHES)
def test_a_read_inside_a_generator_given_to_any(cache):
    # the walk for what the rest of the program can reach went from the generator's frame into modules and touched
    # torch.backends.cuda's plan cache, whose __getattr__ raised "Torch not compiled with CUDA enabled"
    def fn(x):
        return x * any(v > 0 for v in x) + all(x > -5)

    jfn = thunder.jit(fn, cache=cache)
    for x in (torch.tensor([-1.0, 2.0]), torch.tensor([-1.0, -2.0]), torch.tensor([-9.0, 2.0])):
        torch.testing.assert_close(jfn(x), fn(x), rtol=0, atol=0)
