"""torch.func.vmap under thunder.jit: outputs, gradients and errors as in eager (thunder maps the function over
the batch dimension itself; see thunder/frontend/vmap.py)."""

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError

vmap = torch.func.vmap
W = torch.randn(3)
BATCHED_OUTSIDE = torch.vmap(lambda r: (r * W).sum())  # made outside the jitted function, called inside


def _dot(a, b):
    return (a * b).sum()


def _nested(x):
    return vmap(lambda row: vmap(lambda v: v * row.sum())(row))(x)


def _pair(x, y, scale):
    return x * scale + y, (x - y).sum()


CASES = {
    "lambda": (lambda x: vmap(lambda r: r.sum())(x), [(3, 2)]),
    "in_dims=1": (lambda x: vmap(lambda c: c.exp().sum(), in_dims=1)(x), [(3, 4)]),
    "out_dims=1": (lambda x: vmap(lambda r: r.sin(), out_dims=1)(x), [(3, 4)]),
    "out_dims=-1": (lambda x: vmap(lambda r: r.outer(r), out_dims=-1)(x), [(2, 3)]),
    "in_dims tuple with None": (lambda x, y: vmap(_dot, in_dims=(0, None))(x, y), [(4, 3), (3,)]),
    "in_dims negative": (lambda x, y: vmap(_dot, in_dims=(-1, 0))(x, y), [(3, 5), (5, 3)]),
    "tensor and number args, kwargs unbatched": (
        lambda x, y: vmap(_pair, in_dims=(0, 0, None))(x, y, 2.5), [(4, 3), (4, 3)]),
    "kwargs are not batched": (lambda x, y: vmap(lambda a, b=None: a * b)(x, b=y), [(4, 3), (3,)]),
    "nested vmap": (_nested, [(3, 4)]),
    "closure over an outside tensor": (lambda x: vmap(lambda r: (r * W).sum())(x), [(5, 3)]),
    "vmapped function made outside": (lambda x: BATCHED_OUTSIDE(x), [(5, 3)]),
    "batch of 20 (a loop over a body sub-trace)": (lambda x, y: vmap(_dot, in_dims=(0, None))(x, y), [(20, 3), (3,)]),
    "batch of 20, out_dims=1": (lambda x: vmap(lambda r: r.tanh() * 2, out_dims=1)(x), [(20, 3)]),
    "matmul per example": (lambda a, b: vmap(torch.mm)(a, b), [(4, 2, 3), (4, 3, 5)]),
    "unbatched output is expanded": (lambda x: vmap(lambda r: W * 2)(x), [(4, 2)]),
}


@pytest.mark.parametrize("name", CASES)
def test_vmap_outputs_and_gradients_like_eager(name):
    fn, shapes = CASES[name]
    torch.manual_seed(0)
    inputs = [torch.randn(*s, requires_grad=True) for s in shapes]
    jfn = thunder.jit(fn)
    out, expected = jfn(*inputs), fn(*inputs)
    torch.testing.assert_close(out, expected)
    leaves = [o for o in torch.utils._pytree.tree_flatten(expected)[0] if o.requires_grad]
    if not leaves:
        return
    got_leaves = [o for o in torch.utils._pytree.tree_flatten(out)[0] if o.requires_grad]
    loss = sum((o * torch.arange(o.numel()).reshape(o.shape)).sum() for o in got_leaves)
    e_loss = sum((o * torch.arange(o.numel()).reshape(o.shape)).sum() for o in leaves)
    for got, want in zip(torch.autograd.grad(loss, inputs, allow_unused=True),
                         torch.autograd.grad(e_loss, inputs, allow_unused=True)):
        torch.testing.assert_close(got, want)


def test_vmap_under_symbolic_values():
    jfn = thunder.jit(lambda x: vmap(lambda r: r.softmax(-1))(x), cache="symbolic values")
    for n in (3, 5):
        x = torch.randn(n, 4)
        torch.testing.assert_close(jfn(x), torch.softmax(x, -1))


def _raises_like_eager(fn, *args):
    with pytest.raises(Exception) as expected:
        fn(*args)
    with pytest.raises(type(expected.value)) as got:
        thunder.jit(fn)(*args)
    assert str(got.value) == str(expected.value)


ERRORS = {
    "in_dim for a number": (lambda x: vmap(_pair, in_dims=(0, 0, 0))(x, x, 2.0), (torch.randn(3, 2),)),
    "batch sizes differ": (lambda x, y: vmap(_dot)(x, y), (torch.randn(3, 2), torch.randn(4, 2))),
    "in_dim out of range": (lambda x: vmap(lambda r: r, in_dims=2)(x), (torch.randn(3, 2),)),
    "no batched input": (lambda x: vmap(lambda r: r, in_dims=None)(x), (torch.randn(3, 2),)),
    "a random draw": (lambda x: vmap(lambda r: r + torch.randn(2))(x), (torch.randn(3, 2),)),
    ".item()": (lambda x: vmap(lambda r: r * r.sum().item())(x), (torch.randn(3, 2),)),
    "out_dims=None for a batched output": (lambda x: vmap(lambda r: r * 2, out_dims=None)(x), (torch.randn(3, 2),)),
    "a number returned with an int out_dim": (lambda x: vmap(lambda r: (r * 2, 3))(x), (torch.randn(3, 2),)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_vmap_errors_like_eager(name):
    fn, args = ERRORS[name]
    _raises_like_eager(fn, *args)


def test_vmap_out_dims_none_returns_an_unbatched_value():
    def fn(x):
        return vmap(lambda r: (r * 2, W + 1, 3), out_dims=(0, None, None))(x)

    x = torch.randn(3, 2)
    torch.testing.assert_close(thunder.jit(fn)(x), fn(x))


def test_vmap_random_draws_with_other_randomness_are_refused_with_the_line():
    def fn(x):
        return vmap(lambda r: r + torch.rand(2), randomness="different")(x)

    with pytest.raises(UnsupportedError, match=r"randomness='different'.*test_vmap.py:\d+.*draw the random values outside"):
        thunder.jit(fn)(torch.randn(3, 2))


@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev", "jacfwd", "per-sample grad"])
def test_other_torch_func_transforms_are_refused_with_the_line(transform):
    def loss(r):
        return (r * W).sin().sum()

    calls = {
        "grad": lambda x: torch.func.grad(loss)(x),
        "vjp": lambda x: torch.func.vjp(loss, x)[1](torch.ones(())),
        "jacrev": lambda x: torch.func.jacrev(loss)(x),
        "jacfwd": lambda x: torch.func.jacfwd(loss)(x),
        "per-sample grad": lambda x: vmap(torch.func.grad(loss))(x),
    }
    with pytest.raises(UnsupportedError, match=r"torch\.func\..* is not supported by thunder\.jit \(at .*test_vmap\.py:\d+"):
        thunder.jit(calls[transform])(torch.randn(4, 3))
