"""Ordinary programs that crashed inside thunder (fuzzer kinds C4, C7, C8, C9), compared with eager:
outputs, and gradients where inputs require grad."""

import pytest
import torch

import thunder


# C4: a dim computed from a symbolic number is specialized: each value gets its own (checked) trace
@pytest.mark.parametrize("op", ["sum", "amax", "softmax", "mean", "argmax", "cumsum", "flip", "squeeze"])
def test_dim_from_symbolic_number(op):
    def fn(t, n):
        d = n % t.dim()
        return {"sum": lambda: t.sum(d), "amax": lambda: t.amax(d), "softmax": lambda: t.softmax(d),
                "mean": lambda: t.mean(d), "argmax": lambda: t.argmax(d), "cumsum": lambda: t.cumsum(d),
                "flip": lambda: t.flip(d), "squeeze": lambda: t[:1].squeeze(d)}[op]()

    t = torch.randn(2, 3)
    jfn = thunder.jit(fn, cache="symbolic values")
    for n in (3, 2, 5, 4):
        torch.testing.assert_close(jfn(t, n), fn(t, n))


# C7: linear with a 1-D weight (one output feature), any input rank, with and without bias
@pytest.mark.parametrize("shape", [(4,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("bias", [False, True])
def test_linear_1d_weight_grad(shape, bias):
    x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    b = torch.randn((), dtype=torch.float64, requires_grad=True) if bias else None

    def fn(x, w, b):
        return torch.nn.functional.linear(x, w, b)

    try:
        expected = fn(x, w, b)
    except RuntimeError as e:  # eager refuses a bias with a 2-D or wider input: so must we, with its message
        with pytest.raises(RuntimeError) as info:
            thunder.jit(fn)(x, w, b)
        assert str(info.value) == str(e)
        return
    got = thunder.jit(fn)(x, w, b)
    torch.testing.assert_close(got, expected)
    leaves = [x, w] + ([b] if bias else [])
    g = torch.randn_like(expected)
    torch.testing.assert_close(torch.autograd.grad(got, leaves, g), torch.autograd.grad(expected, leaves, g))


def test_linear_same_1d_tensor_as_input_and_weight():
    t = torch.randn(2, dtype=torch.float64, requires_grad=True)
    got = thunder.jit(lambda t: torch.nn.functional.linear(t, t))(t)
    torch.testing.assert_close(got, t @ t)
    (g,) = torch.autograd.grad(got, t)
    torch.testing.assert_close(g, 2 * t.detach())


# C8: split/chunk of an empty dimension gives one (or `chunks`) empty pieces, as in eager
@pytest.mark.parametrize("call", [lambda v: v.split(1, 0), lambda v: v.split(3, 0), lambda v: v.split([0], 0),
                                  lambda v: v.chunk(2, 0), lambda v: torch.split(v, 2)])
@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_split_of_empty_dim(call, cache):
    def fn(t):
        return call(torch.erf(t[1:-1:2]))

    t = torch.randn(2, 2, 2)
    got, expected = thunder.jit(fn, cache=cache)(t), fn(t)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape


# C9: var/std over a dim of size 1 (no degrees of freedom): eager's gradient is nan, also with symbolic sizes
@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("op", [lambda t: t.var(0, keepdim=True), lambda t: t.var(0), lambda t: t.std(0),
                                lambda t: t.var(0, correction=0), lambda t: torch.var_mean(t, 0)[0]])
def test_var_without_degrees_of_freedom(cache, op):
    jfn = thunder.jit(op, cache=cache)
    for shape in [(1, 3), (1, 2), (4, 2)]:
        x = torch.randn(shape, requires_grad=True)
        with pytest.warns(UserWarning) if shape[0] == 1 and op(x).isnan().any() else _nothing():
            expected = op(x)
        got = jfn(x)
        torch.testing.assert_close(got, expected, equal_nan=True)
        g = torch.ones_like(expected)
        torch.testing.assert_close(torch.autograd.grad(got, x, g), torch.autograd.grad(expected, x, g),
                                   equal_nan=True)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# x ** 2 runs as x * x: in the dtype eager's pow gives (fuzz seed 61141: a squared bool tensor is int64, so a later
# subtraction from it is allowed; an int tensor ** 2.0 is float), as the trace's metadata and as the values
@pytest.mark.parametrize("dtype", [torch.bool, torch.int64, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("exponent", [2, 2.0])
def test_square_has_eagers_dtype(dtype, exponent):
    def fn(t):
        v = t ** exponent
        return v, 1 - v.view(-1), v.dtype

    t = torch.tensor([[1, 0], [0, 3]]).to(dtype)
    actual, expected = thunder.jit(fn)(t), fn(t)
    for a, e in zip(actual, expected):
        if isinstance(e, torch.Tensor):
            assert a.dtype == e.dtype
            torch.testing.assert_close(a, e)
        else:
            assert a == e


# softmax and log_softmax of a tensor with no elements return it empty, as eager does (fuzz seed 61515: the max
# subtracted for stability was an amax over an empty dim, which raises)
@pytest.mark.parametrize("op", [torch.softmax, torch.log_softmax, torch.nn.functional.softmax])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_of_empty_tensor(op, dim):
    def fn(t):
        return op(t[1:-1:2], dim=dim)

    t = torch.randn(2, 3, 2, requires_grad=True)
    actual, expected = thunder.jit(fn)(t), fn(t)
    assert actual.shape == expected.shape
    torch.testing.assert_close(actual, expected)
    (actual_grad,) = torch.autograd.grad(actual.sum(), t)
    (expected_grad,) = torch.autograd.grad(expected.sum(), t)
    torch.testing.assert_close(actual_grad, expected_grad)


# eager checks softmax's dtype in the kernel, which an empty tensor never reaches (fuzz seed 201623: log_softmax of an
# empty int64 tensor); a tensor with elements gets eager's error, naming the kernel for its dim
@pytest.mark.parametrize("op", [torch.softmax, torch.log_softmax])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_softmax_of_an_integer_tensor_raises_only_where_eager_runs_a_kernel(op, dim, cache):
    def fn(t):
        return op(t, dim=dim)

    jfn = thunder.jit(fn, cache=cache)
    for shape in [(0, 3), (2, 0), (2, 3), (0, 3), (4, 0), (3,), (0,)]:
        t = torch.ones(shape, dtype=torch.int64)
        try:
            expected = fn(t)
        except NotImplementedError as e:
            with pytest.raises(NotImplementedError) as info:
                jfn(t)
            assert str(info.value) == str(e)
            continue
        actual = jfn(t)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape


# torch.cat of a zero-dimensional tensor raises eager's error, naming its position (fuzz seed 61483: the rows of a
# 1-D tensor, iterated, are 0-d)
@pytest.mark.parametrize("shapes", [((), ()), ((2,), ()), ((), (2,))])
def test_cat_of_zero_dimensional_tensors_raises_like_eager(shapes):
    def fn(a, b):
        return torch.cat([a, b])

    args = [torch.ones(s) for s in shapes]
    with pytest.raises(RuntimeError) as eager:
        fn(*args)
    with pytest.raises(RuntimeError) as jitted:
        thunder.jit(fn)(*args)
    assert str(jitted.value) == str(eager.value)


# alpha takes no part in type promotion (fuzz seed 64019: add of two bools with alpha=2 is bool in eager), and an
# alpha that does not fit the result's kind raises eager's error
@pytest.mark.parametrize("case", [
    lambda t, i, f: torch.add(t, t, alpha=2), lambda t, i, f: torch.add(t, t, alpha=0),
    lambda t, i, f: torch.add(i, t, alpha=3), lambda t, i, f: torch.sub(i, 1.5, alpha=2),
    lambda t, i, f: torch.add(f, i, alpha=0.5), lambda t, i, f: i.add(i, alpha=-2), lambda t, i, f: torch.add(t, t, alpha=True),
    lambda t, i, f: torch.add(i, i, alpha=2.5), lambda t, i, f: torch.sub(i, i, alpha=2.0),
    lambda t, i, f: torch.add(i, i, alpha=True), lambda t, i, f: torch.add(t, t, alpha=2.5),
])
def test_alpha_like_eager(case):
    args = (torch.tensor([True, False]), torch.tensor([1, 2]), torch.tensor([0.5, -1.0]))
    try:
        expected, error = case(*args), None
    except RuntimeError as e:
        error = e
    if error is not None:
        with pytest.raises(RuntimeError) as jitted:
            thunder.jit(case)(*args)
        assert str(jitted.value) == str(error)
    else:
        actual = thunder.jit(case)(*args)
        assert actual.dtype == expected.dtype
        torch.testing.assert_close(actual, expected)
