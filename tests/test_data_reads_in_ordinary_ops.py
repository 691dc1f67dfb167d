"""Ordinary ops that read tensor data where eager calls them (issue 14 found, issue 20's machinery): ``F.one_hot``
inferring its number of classes, and tensors bounding slices (``x[: t.max() + 1]``). Each is compared with eager
over calls whose values change, under every cache option, errors included."""

import pytest
import torch
import torch.nn.functional as F

import thunder
from thunder.core.errors import UnsupportedError

CACHES = [thunder.CACHE_OPTIONS.CONSTANT_VALUES, thunder.CACHE_OPTIONS.SYMBOLIC_VALUES, thunder.CACHE_OPTIONS.NO_CACHING]


def _outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # eager's error is part of what is compared
        return None, e


def _assert_like_eager(fn, calls, cache, grads=False):
    jfn = thunder.jit(fn, cache=cache)
    for args in calls:
        ea = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
        ja = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
        expected, eager_error = _outcome(fn, ea)
        actual, error = _outcome(jfn, ja)
        assert type(error) is type(eager_error) and str(error) == str(eager_error), (eager_error, error)
        if eager_error is not None:
            continue
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
        assert actual.requires_grad == expected.requires_grad
        if grads and expected.requires_grad:
            expected.sum().backward()
            actual.sum().backward()
            for e, a in zip(ea, ja):
                if e.requires_grad:
                    torch.testing.assert_close(a.grad, e.grad, rtol=0, atol=0)


@pytest.mark.parametrize("cache", CACHES)
def test_one_hot_infers_its_classes_from_the_largest_value(cache):
    calls = [(torch.tensor([0, 3, 1]),), (torch.tensor([0, 4]),), (torch.tensor([[0, 3], [1, 1]]),),
             (torch.tensor([2, 2]),)]
    _assert_like_eager(lambda a: F.one_hot(a) * 2, calls, cache)
    _assert_like_eager(lambda a: torch.nn.functional.one_hot(a, num_classes=-1).float().sum(0), calls, cache)


@pytest.mark.parametrize("cache", CACHES)
def test_one_hot_raises_eagers_errors(cache):
    calls = [(torch.tensor([2, -1]),), (torch.tensor([-2, -1]),), (torch.tensor([], dtype=torch.long),),
             (torch.tensor([1, 2], dtype=torch.int32),)]
    _assert_like_eager(lambda a: F.one_hot(a), calls, cache)
    given = [(torch.tensor([0, 3]),), (torch.tensor([0, 7]),), (torch.tensor([-1, 2]),),
             (torch.tensor([], dtype=torch.long),)]
    _assert_like_eager(lambda a: F.one_hot(a, 5), given, cache)


@pytest.mark.parametrize("cache", CACHES)
def test_one_hot_feeds_a_differentiable_product(cache):
    def fn(labels, w):
        return F.one_hot(labels).float() @ w[: labels.max() + 1]

    w = torch.randn(6, 2, requires_grad=True)
    calls = [(torch.tensor([0, 3, 1]), w), (torch.tensor([2, 2]), w), (torch.tensor([5, 0]), w)]
    _assert_like_eager(fn, calls, cache, grads=True)


@pytest.mark.parametrize("cache", CACHES)
def test_tensors_bounding_slices_are_read_as_indices(cache):
    def fn(a, n):
        return torch.cat([a[: n + 1].reshape(-1), a[n:].reshape(-1), a[1, :n], a[:: n.clamp(min=1)].reshape(-1)])

    calls = [(torch.randn(3, 5, requires_grad=True), torch.tensor(2)),
             (torch.randn(3, 5, requires_grad=True), torch.tensor(1)),
             (torch.randn(3, 5, requires_grad=True), torch.tensor(0))]
    _assert_like_eager(fn, calls, cache, grads=True)


@pytest.mark.parametrize("cache", CACHES)
def test_a_slice_bound_that_is_no_index_raises_eagers_error(cache):
    calls = [(torch.randn(5), torch.tensor(2.0)), (torch.randn(5), torch.tensor([1, 2])), (torch.randn(5), torch.tensor(3))]
    _assert_like_eager(lambda a, n: a[:n], calls, cache)


@pytest.mark.parametrize("cache", CACHES)
def test_a_slice_assignment_bounded_by_a_tensor(cache):
    def fn(a, n):
        a = a.clone()
        a[:n] = 0
        a[n:, 1] *= 2
        return a

    calls = [(torch.randn(5, 2, requires_grad=True), torch.tensor(2)), (torch.randn(5, 2, requires_grad=True), torch.tensor(4))]
    _assert_like_eager(fn, calls, cache, grads=True)


def test_an_opaque_op_whose_meta_reads_the_data_is_refused_with_the_reason():
    # the fallback ran the op on zeros where its meta function read a value: named as data-dependent, not meta's error
    from thunder.core import dtypes
    from thunder.core.devices import to_device
    from thunder.core.proxies import TensorProxy
    from thunder.core.trace import TraceCtx, tracectx
    from thunder.torch.opaque import meta_outputs

    def reads_a_value(t):  # a stand-in for any torch op whose meta kernel calls item()
        return torch.zeros(int(t.max()) + 1)

    with tracectx(TraceCtx()):
        a = TensorProxy(shape=(3,), dtype=dtypes.int64, device=to_device("cpu"))
        with pytest.raises(UnsupportedError, match="checks inside it read the values of its inputs"):
            meta_outputs(reads_a_value, (a,), {})


_V = torch.randn(4, 5, 6)
_MASK_KEYS = {
    "mask": lambda m2, m1: (m2,), "slice, mask": lambda m2, m1: (slice(None), m2), "int, mask": lambda m2, m1: (0, m2),
    "None, mask": lambda m2, m1: (None, m2), "ellipsis, mask": lambda m2, m1: (Ellipsis, m1),
    "indices, mask": lambda m2, m1: (torch.tensor([0, 1]), m1), "mask, int": lambda m2, m1: (m2, 0),
    "short slice, mask": lambda m2, m1: (slice(1, None), m1), "two masks": lambda m2, m1: (m1, m2),
    "True, mask": lambda m2, m1: (True, m1), "int, int, mask": lambda m2, m1: (0, 0, m1),
}


@pytest.mark.parametrize("cache", CACHES[:2])
@pytest.mark.parametrize("name", sorted(_MASK_KEYS))
def test_a_mask_of_the_wrong_shape_raises_eagers_index_error(name, cache):
    # the mask's True positions used to index whatever fit: a result where eager raises
    def fn(v, m2, m1):
        return v[_MASK_KEYS[name](m2, m1)]

    wrong = (_V, torch.ones(3, 3, dtype=torch.bool), torch.ones(3, dtype=torch.bool))
    right = (_V, torch.rand(4, 5) > 0.5, torch.rand(4) > 0.5)
    jfn = thunder.jit(fn, cache=cache)
    for args in (wrong, right, wrong):
        expected, eager_error = _outcome(fn, args)
        actual, error = _outcome(jfn, args)
        assert type(error) is type(eager_error) and str(error) == str(eager_error), (eager_error, error)
        if eager_error is None:
            torch.testing.assert_close(actual, expected, rtol=0, atol=0)


@pytest.mark.parametrize("cache", CACHES)
def test_a_mask_assignment_of_the_wrong_shape_raises_eagers_index_error(cache):
    def fn(a, v):
        b = a.clone()
        b[b > 0] = v[b > 0]
        return b

    calls = [(torch.randn(3, 3, requires_grad=True), torch.randn(4, 4, requires_grad=True)),
             (torch.randn(4, 4, requires_grad=True), torch.randn(4, 4, requires_grad=True))]
    _assert_like_eager(fn, calls, cache, grads=True)


@pytest.mark.parametrize("cache", CACHES)
def test_an_update_of_a_view_sized_by_a_value_read_carries_the_gradient(cache):
    # symbolic values: setitem's subsymbols only checked sizes, and differentiating them as its decomposition lost the
    # path from the updated tensor to the input (a None gradient where eager has one)
    def fn(a, n):
        a = a.clone()
        k = n.item()
        a[:k] = 0
        a[k:, 1] *= 2
        return a

    calls = [(torch.randn(5, 2, requires_grad=True), torch.tensor(2)),
             (torch.randn(5, 2, requires_grad=True), torch.tensor(3)),
             (torch.randn(6, 2, requires_grad=True), torch.tensor(3))]
    _assert_like_eager(fn, calls, cache, grads=True)


@pytest.mark.parametrize("cache", CACHES)
def test_allclose_and_narrow_read_their_values_at_the_call(cache):
    def fn(a, b, start):
        if torch.allclose(a, b, atol=1e-3) and a.allclose(b * 1.0001):
            return torch.narrow(a, 0, start, 2) * 2
        return torch.narrow(b, 0, start, 1) - 1

    a = torch.randn(4, 3, requires_grad=True)
    calls = [(a, a.detach().clone(), torch.tensor(1)), (a, a.detach() + 1, torch.tensor(2)),
             (a, a.detach().clone(), torch.tensor(2)), (a, a.detach().clone(), torch.tensor(1.0)),
             (a, a.detach().double(), torch.tensor(0))]
    _assert_like_eager(fn, calls, cache, grads=True)
