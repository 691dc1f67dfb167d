"""An input that only outputs the loss does not use depend on gets no gradient (None), as eager's engine never
reaches it; thunder's node gets a zero cotangent for such an output, which must not turn into a zero gradient."""

import warnings

import pytest
import torch

import thunder


def _broadcast(a, b):
    x, y = torch.broadcast_tensors(a, b)
    return x * 1, y * 1


def _meshgrid(a, b):
    x, y = torch.meshgrid(a, b, indexing="ij")
    return x * 2, y * 2


def _atleast_2d(a, b):
    x, y = torch.atleast_2d(a, b)
    return x - 1, y - 1


def _split_at_tolist(a, b):  # fuzz seed 7297: the dead code before the split reads a
    a, b = a[:, None], b[:, None]
    v0 = torch.cat((b[:1] * 0, a))
    v1 = b[:, ::2]
    v3 = torch.stack([r * 2 for r in v1])
    v4 = torch.cat([x for x, y in zip(v0, v0)])  # noqa: F841 (dead)
    v5 = v1.tolist()  # noqa: F841
    return v3, v3.sum()


# ops run by PyTorch's autograd (an island) whose outputs each depend on one input, and a program split at a value read
PROGRAMS = [_broadcast, _meshgrid, _atleast_2d, _split_at_tolist]


@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__.strip("_"))
def test_an_input_only_unused_outputs_reach_gets_no_gradient(fn):
    results = []
    for f in (fn, thunder.jit(fn)):
        a = torch.randn(3, requires_grad=True, generator=torch.Generator().manual_seed(0))
        b = torch.randn(3, requires_grad=True, generator=torch.Generator().manual_seed(1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the opaque calls' notice
            f(a, b)[1].sum().backward()
        results.append((a.grad, b.grad))
    (ea, eb), (ta, tb) = results
    assert ea is None and ta is None
    torch.testing.assert_close(tb, eb)
