"""``match`` statements in jitted code: each call takes the branch eager takes for its subject, whether
the subject is a new argument or an outside object changed between calls (sequence, mapping and class
patterns, keyword and positional sub-patterns, guards, value and literal patterns)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import thunder

CACHES = ("constant values", "symbolic values")


@dataclasses.dataclass
class Op:
    kind: str
    n: int


class Pair:
    __match_args__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b


class Holder:
    def __init__(self, s):
        self.s = s


def sequence(x, s):
    match s:
        case [a, _]:
            return x + a
        case [a, _, c] if c > 0:
            return x * c
        case [a, *rest]:
            return x - len(rest)
        case _:
            return x - 1


def mapping(x, d):
    match d:
        case {"op": "add", "v": v}:
            return x + v
        case {"op": "mul", "v": v, **rest} if not rest:
            return x * v
        case {"op": _}:
            return x - 100
        case _:
            return x


def class_keywords(x, p):
    match p:
        case Op(kind="add", n=n):
            return x + n
        case Op(kind="mul", n=n) if n > 2:
            return x * n
        case Op():
            return x - 1
        case _:
            return x


def class_positional(x, q):
    match q:
        case Pair(1, b):
            return x + b
        case Pair(a, 2):
            return x * a
        case Pair(a=a) if a < 0:
            return x - a
        case _:
            return x


def attribute_subject(x, h):
    match h.s:
        case 0:
            return x
        case 1 | 2:
            return x + 1
        case int(n) if n > 10:
            return x * n
        case str():
            return x - 5
        case _:
            return x - 1


def guard_on_attribute(x, h):
    match x.shape[0]:
        case 2 if h.s > 0:
            return x + h.s
        case 2:
            return x - 1
        case _:
            return x


def literals(x, s):
    match s:
        case "a":
            return x + 2
        case None:
            return x + 3
        case True:
            return x + 4
        case 1:
            return x + 5
        case _:
            return x


def builtin_classes(x, y):
    match y:
        case torch.Tensor():
            return x + y
        case float(v) | int(v):
            return x * v
        case _:
            return x


SUBJECTS = {
    sequence: lambda: ([1, 2], [1, 2, 3], [1, 2, -3], [5, 6, 7, 8], (4, 5), 5, "ab", [1, 2, 3]),
    mapping: lambda: ({"op": "add", "v": 2}, {"op": "mul", "v": 3}, {"op": "mul", "v": 3, "z": 1}, {"op": "x"}, {},
                      {"op": "add", "v": 5}),
    class_keywords: lambda: (Op("add", 1), Op("mul", 3), Op("mul", 1), Op("add", 7), 3),
    class_positional: lambda: (Pair(1, 5), Pair(3, 2), Pair(-2, 0), Pair(4, 4), Op("a", 1)),
    attribute_subject: lambda: (Holder(0), Holder(1), Holder(2), Holder(20), Holder(5), Holder("s"), Holder(3.0)),
    guard_on_attribute: lambda: (Holder(1), Holder(0), Holder(3)),
    literals: lambda: ("a", None, True, 1, 0, "b", False, 1.0),
    builtin_classes: lambda: (torch.ones(2), 2.0, 3, "z"),
}


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("fn", list(SUBJECTS), ids=lambda f: f.__name__)
def test_each_subject_takes_eager_branch(fn, cache):
    jfn = thunder.jit(fn, cache=cache)
    x = torch.ones(2)
    results = []
    for subject in SUBJECTS[fn]():
        expected = fn(x, subject)
        torch.testing.assert_close(jfn(x, subject), expected, msg=f"subject {subject!r}")
        results.append(expected)
    assert len({tuple(r.tolist()) for r in results}) > 2, "the subjects must take several branches"


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("fn, changes", [
    (attribute_subject, [("s", 5), ("s", 1), ("s", 20), ("s", "t")]),
    (guard_on_attribute, [("s", 0), ("s", 4)]),
    (class_keywords, [("kind", "mul"), ("n", 5), ("n", 1), ("kind", "sub")]),
    (class_positional, [("a", 3), ("b", 2), ("a", -1)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_subject_mutated_between_calls(fn, changes, cache):
    jfn = thunder.jit(fn, cache=cache)
    x = torch.ones(2)
    subject = SUBJECTS[fn]()[0]
    torch.testing.assert_close(jfn(x, subject), fn(x, subject))
    for name, value in changes:
        setattr(subject, name, value)
        torch.testing.assert_close(jfn(x, subject), fn(x, subject), msg=f"after {name}={value!r}")


@pytest.mark.parametrize("cache", CACHES)
def test_outside_mapping_subject_changed(cache):
    config = {"op": "add", "v": 2}

    def f(x):
        return mapping(x, config)

    jf = thunder.jit(f, cache=cache)
    x = torch.ones(2)
    for change in (lambda: None, lambda: config.update(z=1, op="mul"), lambda: config.pop("z"),
                   lambda: config.pop("v"), lambda: config.clear()):
        change()
        torch.testing.assert_close(jf(x), f(x), msg=f"config {config}")
