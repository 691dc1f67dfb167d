"""In-place changes of a tensor's shape and strides (``t_``, ``transpose_``, ``swapaxes_``, ``swapdims_``,
``squeeze_``, ``unsqueeze_``) against eager: on intermediates, on views (later writes reach the base), on inputs
(the caller's tensor has eager's new shape, strides and values after the call, on cache hits too), with autograd."""

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError

CACHES = ["constant values", "symbolic values"]

# method -> (arguments, a shape it applies to)
METHODS = {
    "t_": ((), (3, 2)),
    "transpose_": ((0, -1), (3, 1, 2)),
    "swapaxes_": ((1, 0), (3, 2)),
    "swapdims_": ((-1, 0), (2, 3, 2)),
    "squeeze_": ((), (3, 1, 2)),
    "squeeze_dim": ((1,), (3, 1, 2)),
    "unsqueeze_": ((1,), (3, 2)),
}


def _call(x, method):
    args, _ = METHODS[method]
    name = "squeeze_" if method == "squeeze_dim" else method
    result = getattr(x, name)(*args)
    assert result is x  # eager and thunder: the method returns the tensor itself
    return x


def on_intermediate(method):
    def fn(a):
        y = a * 2
        _call(y, method)
        y.add_(torch.arange(y.numel(), dtype=y.dtype).reshape(y.shape))
        return y, y.shape[0] + 1, y.sum(-1)

    return fn


def on_view(method):
    def fn(a):
        y = a + 1
        v = y[1:]
        _call(v, method)
        v.mul_(torch.arange(v.numel(), dtype=v.dtype).reshape(v.shape))  # reaches y through the re-shaped view
        return y, v

    return fn


def on_input(method):
    def fn(a):
        _call(a, method)
        a.sub_(torch.arange(a.numel(), dtype=a.dtype).reshape(a.shape))
        return a.sum(0), a.shape

    return fn


def on_input_returned(method):
    def fn(a):
        return _call(a, method)

    return fn


def on_view_of_input(method):
    def fn(a):
        v = a[:2]
        _call(v, method)
        v.zero_()
        return v

    return fn


KINDS = [on_intermediate, on_view, on_input, on_input_returned, on_view_of_input]


def _assert_same(actual, expected):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor) and actual.shape == expected.shape, (actual, expected)
        assert torch.equal(actual, expected), (actual, expected)
    elif isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _assert_same(a, e)
    else:
        assert actual == expected


def assert_like_eager(fn, shapes, cache, requires_grad=False):
    """Calls the jitted ``fn`` with fresh inputs of each shape (a cache hit after the first of a shape) and checks
    results, inputs after the call (values, shape, strides, identity of a returned input) and gradients."""
    jfn = thunder.jit(fn, cache=cache)
    for shape in shapes:
        base = torch.randn(shape, dtype=torch.float64)
        args_e = base.clone().requires_grad_(requires_grad)
        args_t = base.clone().requires_grad_(requires_grad)
        expected, actual = fn(args_e), jfn(args_t)
        _assert_same(actual, expected)
        if not requires_grad:
            assert args_t.shape == args_e.shape and args_t.stride() == args_e.stride()
            assert torch.equal(args_t, args_e)
            returned_e = [o is args_e for o in (expected if isinstance(expected, tuple) else (expected,))]
            returned_t = [o is args_t for o in (actual if isinstance(actual, tuple) else (actual,))]
            assert returned_t == returned_e
        else:
            outs_e = [o for o in expected if isinstance(o, torch.Tensor)]
            outs_t = [o for o in actual if isinstance(o, torch.Tensor)]
            weights = [torch.randn(o.shape, dtype=o.dtype) for o in outs_e]
            (grad_e,) = torch.autograd.grad(outs_e, args_e, weights)
            (grad_t,) = torch.autograd.grad(outs_t, args_t, weights)
            torch.testing.assert_close(grad_t, grad_e)
    return jfn


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_like_eager(kind, method, cache):
    _, shape = METHODS[method]
    jfn = assert_like_eager(kind(method), [shape, shape, tuple(d + 1 if d != 1 else 1 for d in shape)], cache)
    assert thunder.cache_hits(jfn) >= 1


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("kind", [on_intermediate, on_view], ids=lambda k: k.__name__)
def test_gradients_like_eager(kind, method, cache):
    _, shape = METHODS[method]
    assert_like_eager(kind(method), [shape, shape], cache, requires_grad=True)


def test_the_epilogue_changes_the_callers_tensor_on_every_call():
    def fn(x):
        x.t_()
        x[0] = 1
        return x * 2

    jfn = thunder.jit(fn)
    for _ in range(3):
        x = torch.zeros(2, 3)
        out = jfn(x)
        assert x.shape == (3, 2) and x.stride() == (1, 3)
        assert torch.equal(x, torch.tensor([[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]))
        assert torch.equal(out, 2 * x)
    assert thunder.cache_hits(jfn) == 2
    assert "obj0.t_()" in str(thunder.compile_stats(jfn).last_epilogue_traces[-1])


def test_stored_before_the_change_sees_the_change():
    """The object the program stored is the tensor itself: eager's list holds the transposed tensor."""
    held = []

    def fn(x):
        y = x + 1
        held.append(y)
        y.t_()
        return y.shape

    assert thunder.jit(fn)(torch.zeros(2, 3)) == torch.Size([3, 2])
    assert held[-1].shape == (3, 2)


def test_input_changed_before_the_program_raises():
    def fn(x):
        x.unsqueeze_(0)
        x.add_(1)
        raise ValueError(f"shape {tuple(x.shape)}")

    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match=r"shape \(1, 2, 3\)"):
        thunder.jit(fn)(x)
    assert x.shape == (1, 2, 3) and torch.equal(x, torch.ones(1, 2, 3))


@pytest.mark.parametrize("where, message", [
    (lambda x: x, "a leaf Variable that requires grad is being used in an in-place operation."),
    (lambda x: x[1:], "a view of a leaf Variable that requires grad is being used in an in-place operation."),
])
def test_eagers_leaf_errors(where, message):
    def fn(x):
        where(x).t_()
        return x

    for f in (fn, thunder.jit(fn)):
        with pytest.raises(RuntimeError, match=message):
            f(torch.randn(3, 2, requires_grad=True))


def test_eagers_errors_for_bad_arguments():
    def fn(x):
        x.transpose_(0, 5)

    with pytest.raises(IndexError, match="Dimension out of range"):
        thunder.jit(fn)(torch.randn(2, 3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'dimension'"):
        thunder.jit(lambda x: x.unsqueeze_(dimension=0))(torch.randn(2))
    x = torch.randn(2, 2, 2)
    with pytest.raises(RuntimeError) as eager:
        x.t_()
    with pytest.raises(RuntimeError) as jitted:
        thunder.jit(lambda x: x.t_())(x)
    assert str(jitted.value) == str(eager.value)  # "t_() expects a tensor with <= 2 dimensions..."


def test_keyword_arguments_replay_on_the_input():
    def fn(x):
        x.unsqueeze_(dim=0)
        x.transpose_(dim0=0, dim1=2)
        return x

    assert_like_eager(fn, [(2, 3), (2, 3)], "constant values")


def test_tensor_passed_twice_is_refused():
    def fn(x, y):
        x.t_()
        return y + 1

    x = torch.randn(2, 3)
    with pytest.raises(UnsupportedError, match="t_ of a tensor the jitted function reaches by two paths"):
        thunder.jit(fn)(x, x)


def test_under_no_grad_of_a_tensor_requiring_grad_is_refused():
    def fn(x):
        with torch.no_grad():
            x.t_()
        return x * 2

    with pytest.raises(UnsupportedError, match="in-place change of the shape of a tensor that requires grad"):
        thunder.jit(fn)(torch.randn(2, 3, requires_grad=True))


def test_inside_a_branch_of_cond_is_refused():
    """A branch shares the outer trace's objects: rebinding one there would change the outer trace's tensor."""

    def fn(x):
        def true_branch(x):
            y = x * 2
            y.t_()
            return y.t()

        return torch.cond(x.sum() > 0, true_branch, lambda x: x + 1, (x,))

    with pytest.raises(UnsupportedError, match="t_ inside a higher-order operator's body"):
        thunder.jit(fn)(torch.randn(2, 3))
