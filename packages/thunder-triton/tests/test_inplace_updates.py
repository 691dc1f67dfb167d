"""In-place updates of inputs (and of views of inputs) reach the caller when the Triton executor is first in the
list, whether or not the copy lands in a kernel: a copy handed back to the torch executor keeps its side-effect
tag, so dead-code elimination keeps it (the differential fuzzer found these updates vanishing)."""

import pytest
import torch
from triton_helpers import jit_triton

import thunder


def setitem_of_a_view(t):
    v = t[0]
    v[...] = 5


def zero_of_narrow(t):
    t.narrow(0, 0, 1).zero_()


def masked_fill_of_input(t):
    t.masked_fill_(t > 0, 0)


def setitem_then_return(t):
    t[:, 1:] = 0
    return t


def add_then_scale(t):  # the update lands in a kernel
    t.add_(1).mul_(2)


@pytest.mark.parametrize("fn", [setitem_of_a_view, zero_of_narrow, masked_fill_of_input, setitem_then_return,
                                add_then_scale])
def test_inplace_update_of_input_reaches_the_caller(triton_ex, device, fn):
    jfn = jit_triton(fn)
    for _ in range(2):  # the tracing call and a cached one
        x = torch.randn(3, 4, device=device)
        expected_input = x.clone()
        expected = fn(expected_input)
        actual = jfn(x)
        torch.testing.assert_close(x, expected_input)
        if expected is not None:
            assert actual is x
    assert thunder.cache_hits(jfn) == 1
