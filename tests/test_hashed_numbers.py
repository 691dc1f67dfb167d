"""Numbers hashed by the program (set members, dict keys, ``hash()``, ``Counter``) are hashed by value as in eager,
whatever stands for them while tracing: under ``cache="symbolic values"`` a size is a symbolic number, which used to
be hashed by identity, so ``len(set(x.shape))`` was cached for one shape and silently reused for another."""

import collections

import pytest
import torch

import thunder

CACHES = [thunder.CACHE_OPTIONS.CONSTANT_VALUES, thunder.CACHE_OPTIONS.SYMBOLIC_VALUES, thunder.CACHE_OPTIONS.NO_CACHING]


def _in_a_loop(x):
    seen = set()
    for d in x.shape:
        seen.add(d)
    return x.reshape(-1)[: len(seen)]


def _dict_by_size(x):
    d = {}
    for i, v in enumerate(x.shape):
        d[v] = i
    return x.reshape(-1)[: len(d)] * d[x.shape[0]]


def _tuple_key(x):
    cache = {}
    cache[(x.shape[0], 1)] = x * 2
    return cache.get((3, 1), x)


PROGRAMS = {
    "set.add in a loop": _in_a_loop,
    "set(shape)": lambda x: x.reshape(-1)[: len(set(x.shape))],
    "set comprehension": lambda x: x.reshape(-1)[: len({d for d in x.shape})],
    "dict item assignment": _dict_by_size,
    "membership in a set literal": lambda x: x * (x.shape[0] in {3, 4}),
    "dict literal keys": lambda x: x * len({x.shape[0]: 1, x.shape[1]: 2}),
    "tuple keys": _tuple_key,
    "hash()": lambda x: x * (hash(x.shape[0]) == hash(x.shape[1])),
    "frozenset and dict.fromkeys": lambda x: x * len(frozenset(x.shape)) + len(dict.fromkeys(x.shape)),
    "Counter": lambda x: x * collections.Counter(x.shape)[3],
}


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_sizes_hashed_by_value(name, cache):
    fn = PROGRAMS[name]
    jfn = thunder.jit(fn, cache=cache)
    for shape in ((2, 3), (3, 3), (4, 3), (3, 3), (2, 3)):
        x = torch.randn(shape, requires_grad=True)
        expected = fn(x)
        actual = jfn(x)
        assert actual.shape == expected.shape
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)


@pytest.mark.parametrize("cache", CACHES)
def test_number_inputs_as_set_members(cache):
    def fn(x, n):
        return x * len({n, 3})

    jfn = thunder.jit(fn, cache=cache)
    x = torch.randn(2)
    for n in (3, 4, 3, 5):
        torch.testing.assert_close(jfn(x, n), fn(x, n), rtol=0, atol=0)


@pytest.mark.parametrize("cache", CACHES)
def test_a_value_read_from_a_tensor_as_a_dict_key(cache):
    table = {0: 1.0, 1: 2.0, 2: 3.0}

    def fn(x, i):
        return x * table[int(i.argmax())]

    jfn = thunder.jit(fn, cache=cache)
    x = torch.randn(3)
    for i in (torch.tensor([1, 0, 0]), torch.tensor([0, 0, 5]), torch.tensor([0, 2, 1])):
        torch.testing.assert_close(jfn(x, i), fn(x, i), rtol=0, atol=0)
