"""Fuzzer finding (seed 1796, grad fraction 1.0, also with executors torch,python): under symbolic values, a program
split at ``nonzero`` whose first call had one selected element gave NaN gradients on a later call with three, where
eager's are finite. The unused ``std`` over a dim of size 1 is NaN; the first segment's backward, specialized for its
unused outputs, still ran std's gradient because another gradient (of t0, reached only through unused outputs) was
all zero terms. Such a gradient is now None, as eager's engine leaves it, and the zero terms are dropped."""

import torch

import thunder


def fn(t0, t1, n0, f0):
    v0 = t0 * t0
    v1 = torch.maximum(v0, v0)  # noqa: F841 - unused, as the fuzzer wrote it
    v3 = t1 * f0
    v4 = v3.std(-2)  # noqa: F841
    return v3[(v3 > 0).nonzero(as_tuple=True)], v3


def test_gradients_after_a_split_are_eagers_on_every_call():
    jf = thunder.jit(fn, cache="symbolic values")
    for s, values in ((2.83, [0.73, 0.16, -1.64, 0.16]), (-0.38, [-0.94, -1.07, -1.5, 0.65])):
        t0 = torch.tensor(s, requires_grad=True)
        t1 = torch.tensor([values], requires_grad=True)
        e1 = t1.detach().clone().requires_grad_()
        out, want = jf(t0, t1, 6, -0.27), fn(t0, e1, 6, -0.27)
        (out[0].sum() + out[1].sum()).backward()
        (want[0].sum() + want[1].sum()).backward()
        assert torch.equal(t1.grad, e1.grad)
        assert t0.grad is None or not t0.grad.isnan().any()
