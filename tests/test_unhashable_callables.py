"""Callables that cannot be hashed (a class defining ``__eq__`` without ``__hash__``; pybind11's
``instancemethod``, which FSDP2's placements use as property getters) are called like any other, never crash the
jit's lookaside tables."""

from __future__ import annotations

import torch

import thunder


class Scale:
    """A callable with value equality, hence unhashable."""

    def __init__(self, factor):
        self.factor = factor

    def __eq__(self, other):
        return isinstance(other, Scale) and other.factor == self.factor

    def __call__(self, x):
        return x * self.factor


class Unhashable:
    """A native callable that is unhashable: ``list`` instances are not callable, so wrap ``len`` in one."""

    __hash__ = None

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        return self.fn(*args)


class Holder:
    scale = Scale(3.0)
    # a property whose getter is an unhashable callable object
    size = property(Unhashable(lambda self: 2))


def test_unhashable_callable_object():
    holder = Holder()

    def f(x):
        return holder.scale(x) + holder.size

    x = torch.randn(3)
    jf = thunder.jit(f)
    torch.testing.assert_close(jf(x), f(x))
    torch.testing.assert_close(jf(x), f(x))
    assert thunder.cache_hits(jf) == 1


def test_unhashable_native_callable():
    pybind_like = Unhashable(torch.sin)

    def f(x):
        return pybind_like(x) + 1

    x = torch.randn(3)
    torch.testing.assert_close(thunder.jit(f)(x), f(x))
