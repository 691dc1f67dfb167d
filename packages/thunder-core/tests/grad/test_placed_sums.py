"""Gradients of complementary slices summed as one ``cat`` (thunder/transforms/placed_sums.py).

Each program is checked against eager (outputs and gradients exactly equal: the merge only drops additions of
zeros) and its backward trace for what it runs: no zero fill and no add where the slices' gradients fit together,
the zero-filled form where they do not (overlapping slices, slices with a gap, symbolic sizes).
"""

from __future__ import annotations

import pytest
import torch

import thunder
from thunder.core import dtypes, prims
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, tracectx
from thunder.testing.gradients import assert_output_and_grad_like_eager
from thunder.transforms.placed_sums import merge_placed_sums


def _grads(fn, *args, cache=None):
    """(jitted backward trace before dispatch, the executed one); outputs and gradients equal eager's."""
    jfn = thunder.jit(fn, cache=cache) if cache else thunder.jit(fn)
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    expected, actual = fn(*args), jfn(*args)
    assert torch.equal(actual, expected)
    cot = torch.randn_like(expected, generator=torch.Generator().manual_seed(0))
    for a, e in zip(torch.autograd.grad(actual, leaves, cot), torch.autograd.grad(expected, leaves, cot)):
        assert a.dtype == e.dtype and torch.equal(a, e)
    traces = thunder.last_backward_traces(jfn)
    return traces[0], traces[-1]


def _count(trace, sym) -> int:
    return sum(b.sym is sym for b in trace.bound_symbols)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(q, cos, sin):  # the rotary embedding of Llama-style models
    return (q * cos) + (rotate_half(q) * sin)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_rotary_embedding_backward_is_one_cat(dtype):
    q = torch.randn(2, 3, 5, 8, dtype=dtype, requires_grad=True)
    cos, sin = torch.randn(5, 8, dtype=dtype), torch.randn(5, 8, dtype=dtype)
    backward, executed = _grads(rope, q, cos, sin)
    assert _count(backward, prims.full) == 0, backward
    assert _count(backward, prims.cat) == 1, backward
    assert _count(backward, prims.add) == 1, backward  # q * cos's gradient and the rotated half's: eager's one sum
    assert "torch.cat(" in str(executed) and "full(" not in str(executed)


def test_dense_gradient_summed_first_is_regrouped():
    # x * cos recorded after the slices: its gradient reaches q first, then each half's placed block; the sum is
    # regrouped as dense + cat(halves), each element still dense plus the one block that is not zero there
    def f(q, cos, sin):
        x1, x2 = q[..., :4], q[..., 4:]
        rotated = torch.cat((-x2, x1), -1)
        dense = q * cos
        return rotated * sin + dense

    backward, _ = _grads(f, torch.randn(3, 5, 8, requires_grad=True), torch.randn(5, 8), torch.randn(5, 8))
    assert _count(backward, prims.full) == 0 and _count(backward, prims.add) == 1, backward


def test_three_complementary_slices():
    def f(x):
        return torch.cat([x[:, :2].sin(), x[:, 2:5].exp(), x[:, 5:] * 3], 1)

    backward, _ = _grads(f, torch.randn(4, 7, requires_grad=True))
    assert _count(backward, prims.full) == 0 and _count(backward, prims.add) == 0, backward


def test_partial_rotary_passthrough():
    # litgpt's partial rotary: the first n dims rotated, the rest passed through
    def f(q, cos, sin):
        q_roped = rope(q[..., :4], cos, sin)
        return torch.cat((q_roped, q[..., 4:]), dim=-1)

    q = torch.randn(2, 3, 16, requires_grad=True)
    backward, _ = _grads(f, q, torch.randn(3, 4), torch.randn(3, 4))
    assert _count(backward, prims.full) == 0, backward


@pytest.mark.parametrize("slices", [(slice(0, 5), slice(3, 8)), (slice(0, 2), slice(4, 8)), (slice(0, 4), slice(0, 4))],
                         ids=["overlapping", "gap", "same"])
def test_slices_that_do_not_fit_together_keep_their_zero_blocks(slices):
    a, b = slices

    def f(x):
        return x[:, a].sin().sum(1) + x[:, b].cos().sum(1)

    backward, _ = _grads(f, torch.randn(3, 8, requires_grad=True))
    assert _count(backward, prims.full) >= 1, backward


def test_symbolic_sizes_are_not_merged():
    # block sizes that are proxies cannot be compared without a check: the zero-filled form stays, still exact
    backward, _ = _grads(rope, torch.randn(2, 6, 8, requires_grad=True), torch.randn(6, 8), torch.randn(6, 8),
                         cache="symbolic values")
    assert _count(backward, prims.full) >= 1, backward


def test_negative_zero_cotangent_values_equal_eager():
    # eager's sum turns a -0.0 of a cotangent into +0.0, the merged cat keeps it: equal as numbers
    def f(x):
        return torch.cat((x[:, 2:] * 1.0, x[:, :2] * -1.0), 1)

    x = torch.zeros(2, 4, requires_grad=True)
    jf = thunder.jit(f)
    (g,) = torch.autograd.grad(jf(x), [x], torch.full((2, 4), -0.0))
    (e,) = torch.autograd.grad(f(x), [x], torch.full((2, 4), -0.0))
    assert torch.equal(g, e)


def test_a_placed_block_read_twice_is_left_alone():
    # a cat read by more than the sum stays as it is (merging would compute it twice)
    t = TraceCtx("t")
    with tracectx(t):
        g1 = TensorProxy("g1", shape=(2, 3), dtype=dtypes.float32, device="cpu")
        g2 = TensorProxy("g2", shape=(2, 3), dtype=dtypes.float32, device="cpu")
        z1 = prims.full((2, 3), 0, device=g1.device, dtype=g1.dtype)
        z2 = prims.full((2, 3), 0, device=g1.device, dtype=g1.dtype)
        a = prims.cat([z1, g1], 1)
        b = prims.cat([g2, z2], 1)
        s = prims.add(a, b)
    both_read = merge_placed_sums(list(t.bound_symbols), (s, a), lambda: t.make_unique_name("placed"))
    assert [b.sym for b in both_read] == [b.sym for b in t.bound_symbols]
    merged = merge_placed_sums(list(t.bound_symbols), (s,), lambda: t.make_unique_name("placed"))
    assert [b.sym for b in merged] == [prims.cat]
    assert [p.name for p in merged[0].args[0]] == ["g2", "g1"] and merged[0].output is s


def test_a_sum_whose_operand_has_symbolic_sizes_is_left_alone():
    # fuzz seed 327004: regrouping compared an operand's symbolic shape with the sum's (static) one, which records a
    # check and failed outside tracing ("prims.eq can only be called while tracing")
    def f(t1):
        v0 = torch.nn.functional.normalize(t1, dim=0)
        v5 = torch.log_softmax(t1, dim=-1)[0]
        return torch.mul(v0, t1) @ v5

    jf = thunder.jit(f, cache="symbolic values")
    for shape in ((2, 2), (3, 3), (2, 2)):
        assert_output_and_grad_like_eager(jf, f, torch.randn(shape, requires_grad=True))
