"""diff, cumsum, F.pad and unary operators, against eager (the torch executor, and prims where they decompose)."""

import pytest
import torch
import torch.nn.functional as F
from torchlang_helpers import b8, check, f32, i64


@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"n": 2}, {"prepend": "p"}, {"append": "p"}])
def test_diff(kwargs):
    x = f32(4, 5)
    if "prepend" in kwargs or "append" in kwargs:
        key = "prepend" if "prepend" in kwargs else "append"
        check(lambda x, p: torch.diff(x, **{key: p}), x, f32(4, 1), calls=("torch.diff(",))
    else:
        check(lambda x: torch.diff(x, **kwargs), x, calls=("torch.diff(",))


def test_diff_bool_and_int():
    check(lambda x: x.diff(), b8(6))
    check(lambda x: x.diff(dim=0), i64(3, 4))


@pytest.mark.parametrize("make", [f32, i64, b8])
def test_cumsum(make):
    check(lambda x: x.cumsum(-1), make(3, 4), mode="direct", calls=("torch.cumsum(",))


@pytest.mark.parametrize("pad,value", [((0, 1), -100.0), ((1, 2, 0, 1), 0.5), ((-1, 2), 0.0), ((2, -1, 1, 1), 3.0)])
def test_pad_constant(pad, value):
    check(lambda x: F.pad(x, pad, value=value), f32(2, 3, 5), calls=("torch.nn.functional.pad(",))


def test_pad_reflect_runs_opaque():
    check(lambda x: F.pad(x, (1, 1), mode="reflect"), f32(1, 2, 5), mode="direct")


def test_unary_operators():
    check(lambda x: (-x, abs(x), +x), f32(3))
    check(lambda x: ~x, i64(3))
