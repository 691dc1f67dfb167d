"""Region updates of inputs (a KV-cache write) run as in-place stores on the torch executor, not as copies of the
whole input, and behave like eager: outputs, the updated inputs, and the cases where the store must stay a copy."""

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError


def _source(jf) -> str:
    return str(thunder.last_traces(jf)[-1])


def _check(fn, make_args, *, calls=3, cache="constant values"):
    jf = thunder.jit(fn, cache=cache)
    for _ in range(calls):
        args = make_args()
        eager_args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        with torch.no_grad():
            out, expected = jf(*args), fn(*eager_args)
        torch.testing.assert_close(out, expected)
        for a, e in zip(args, eager_args):
            if isinstance(a, torch.Tensor):
                torch.testing.assert_close(a, e)
    return jf


def test_index_copy_into_a_view_of_the_cache_is_one_store():
    # litgpt's KVCache: k = cache[:B, ...].index_copy_(-2, pos, k), then attention reads k
    def step(cache, pos, k, q):
        view = cache[:1, ...].index_copy_(-2, pos, k)
        return q @ view.transpose(-1, -2)

    def args():
        return torch.zeros(1, 2, 8, 4), torch.tensor([3]), torch.randn(1, 2, 1, 4), torch.randn(1, 2, 1, 4)

    for cache in ("constant values", "symbolic values"):
        jf = _check(step, args, cache=cache)
        source = _source(jf)
        assert "index_copy_(" in source and "copy_to_out_" not in source and "setitem" not in source, source


def test_index_copy_and_slice_assignment_into_the_cache_itself():
    # HF StaticCache: keys.index_copy_(2, cache_position, k); and keys[:, :, pos] = v
    def step(keys, values, pos, k, v):
        keys.index_copy_(2, pos, k)
        values[:, :, pos] = v
        return keys.sum((-1, -2)) + values.sum((-1, -2))

    def args():
        return (torch.zeros(1, 2, 8, 4), torch.zeros(1, 2, 8, 4), torch.tensor([5]), torch.randn(1, 2, 1, 4),
                torch.randn(1, 2, 1, 4))

    jf = _check(step, args)
    source = _source(jf)
    assert "index_copy_(" in source and "__setitem__(" in source and "copy_to_out_" not in source, source


def test_a_read_of_the_old_value_after_the_update_keeps_the_copy():
    # the functional update is computed, then the old cache is read, then written back: a store at the op's place
    # would show the reader the new value
    def step(cache, pos, k):
        new = cache.index_copy(0, pos, k)
        old_total = cache.sum()
        cache.copy_(new)
        return old_total

    def args():
        return torch.ones(4, 3), torch.tensor([1]), torch.full((1, 3), 5.0)

    _check(step, args)


def test_returned_update_stays_a_tensor_of_its_own():
    def step(cache, pos, k):
        new = cache.index_copy(0, pos, k)
        cache.copy_(new)
        return new

    def args():
        return torch.ones(4, 3), torch.tensor([2]), torch.full((1, 3), 5.0)

    jf = _check(step, args)
    cache = torch.ones(4, 3)
    with torch.no_grad():
        out = jf(cache, torch.tensor([0]), torch.zeros(1, 3))
    assert out.data_ptr() != cache.data_ptr()  # eager's `new` does not alias the cache either


def test_cache_written_twice_keeps_each_value():
    def step(cache, k1, k2):
        first = cache[:2].index_copy_(0, torch.tensor([0]), k1)
        snapshot = first * 1
        cache[:2].index_copy_(0, torch.tensor([1]), k2)
        return snapshot, cache.sum()

    def args():
        return torch.zeros(4, 3), torch.ones(1, 3), torch.full((1, 3), 2.0)

    _check(step, args)


def _store_through_a_view(cache, pos, k):
    view = cache[:1].index_copy_(-2, pos, k * 2)
    return view.sum()


def test_under_autograd_the_update_stays_functional():
    cache, k = torch.zeros(1, 8, 4), torch.randn(1, 1, 4)
    eager_cache = cache.clone()
    out, expected = thunder.jit(_store_through_a_view)(cache, torch.tensor([2]), k), \
        _store_through_a_view(eager_cache, torch.tensor([2]), k)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(cache, eager_cache)


def test_a_store_of_a_value_that_requires_grad_into_an_input_is_refused():
    # eager: the caller's cache then requires grad and a loss using it sends gradients to k; thunder cannot connect
    # the caller's tensor to its node (it gave k.grad 2 where eager gives 22 below), so it refuses (fuzz seed 221119)
    def step_and_use(fn):
        cache, k = torch.zeros(1, 8, 4), torch.ones(1, 1, 4, requires_grad=True)
        out = fn(cache, torch.tensor([2]), k)
        (out + cache.sum() * 10).backward()
        return k.grad

    assert step_and_use(_store_through_a_view).flatten().tolist() == [22.0] * 4
    with pytest.raises(UnsupportedError, match=r"in-place update of the input .* with a value that requires grad"):
        step_and_use(thunder.jit(_store_through_a_view))


def test_a_read_of_an_old_view_after_the_update_keeps_the_copy():
    def step(cache, pos, k):
        tail = cache[2:]
        new = cache.index_copy(0, pos, k)
        old_tail = tail.sum()
        cache.copy_(new)
        return old_tail

    def args():
        return torch.ones(4, 3), torch.tensor([3]), torch.full((1, 3), 5.0)

    _check(step, args)


def test_elementwise_update_folded_into_out_keeps_old_views_old():
    # `new = cache * 2` folded into torch.mul(cache, 2, out=cache) must not run before a read of an old view
    def step(cache):
        tail = cache[2:]
        new = cache * 2
        old_tail = tail.sum()
        cache.copy_(new)
        return old_tail

    _check(step, lambda: (torch.ones(4, 3),))


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_view_read_after_the_store_sees_the_new_values(cache):
    # fuzz seed 70239: the store into t0 must stay before the reads of its (re-taken) view, whatever the scheduling
    def step(t0):
        v0 = t0[1:]
        t0[[0, 1]] = 2
        return v0.prod(1).reshape(-1)

    _check(step, lambda: (torch.randn(2, 2, 2),), cache=cache)


@pytest.mark.parametrize("gather, index, store", [
    # prims.index: gradient index_put into zeros (a negative index counts from the end, as in eager)
    (lambda x, i: x[i], [5, 0, -1, 5], "thunder.executors.torch_impls.index_put_("),
    (lambda x, i: x.index_select(0, i), [5, 0, 2, 5], "torch.Tensor.index_add_("),  # prims.take: index_add
    (lambda x, i: x.gather(0, i[:, None].expand(-1, 3)), [5, 0, 2, 5], "torch.Tensor.scatter_add_("),
])
def test_a_gathers_gradient_scatters_into_its_fresh_zeros_in_place(gather, index, store):
    # eager's backward writes into the zeros it made; a functional scatter would copy the whole buffer first
    def f(x, w, i):
        return (gather(x, i) * w).sum(0)

    x, w = torch.randn(6, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True)
    i = torch.tensor(index)  # a repeated index accumulates
    ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    jf = thunder.jit(f)
    torch.testing.assert_close(jf(x, w, i), f(ex, ew, i))
    g = torch.randn(3)
    torch.testing.assert_close(torch.autograd.grad(jf(x, w, i), (x, w), g),
                               torch.autograd.grad(f(ex, ew, i), (ex, ew), g))
    backward = str(thunder.last_backward_traces(jf)[-1])
    code = [line for line in backward.splitlines() if not line.lstrip().startswith("#")]  # not the source comments
    assert any(line.lstrip().startswith(store) for line in code), backward


@pytest.mark.parametrize("key", [
    lambda e: e,  # w[expert]: a 0-d index picks one slice
    lambda e: -1 - e,  # counted from the end
    lambda e: (e, e.to(torch.int32)),  # two positions, an int32 index
])
def test_a_gradient_scattered_at_one_position_is_written_into_that_slice(key):
    # the gradient of w[e] with e a 0-d tensor: eager's select_backward copies into the slice; the indexing kernel
    # (an offset per element) gives the same values, slower
    def f(w, x, e):
        return x * w[key(e)].sin()

    w, x = torch.randn(4, 3, 3, requires_grad=True), torch.randn(5, 1, 3)
    ew = w.detach().clone().requires_grad_()
    jf = thunder.jit(f)
    for e in (torch.tensor(2), torch.tensor(0)):
        out, expected = jf(w, x, e), f(ew, x, e)
        g = torch.randn_like(expected)
        torch.testing.assert_close(torch.autograd.grad(out, w, g), torch.autograd.grad(expected, ew, g))


@pytest.mark.parametrize("accumulate", [True, False])
@pytest.mark.parametrize("shape, indices, values", [
    ((6, 3, 2), (torch.tensor(-2),), (3, 2)),
    ((6, 3, 2), (torch.tensor(1), torch.tensor(2)), (2,)),
    ((6, 3, 2), (torch.tensor(4, dtype=torch.int32),), (2,)),  # broadcast over the slice
    ((6, 3), (torch.tensor(1),), ()),
    ((6, 3), (torch.tensor([1, 1]),), (3,)),  # not one position: the indexing kernel (repeated rows accumulate)
])
def test_the_torch_executors_index_put_is_atens(shape, indices, values, accumulate):
    from thunder.executors.torch_impls import index_put_

    a, v = torch.randn(shape), torch.randn(values)
    b = a.clone()
    expected = torch.ops.aten.index_put_.default(b, list(indices), v, accumulate)
    assert index_put_(a, indices, v, accumulate) is a and expected is b  # written in place, as ATen's is
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    for bad in (torch.tensor(6), torch.tensor(-7)):
        with pytest.raises(IndexError) as ours:
            index_put_(a, (bad,), torch.zeros(shape[1:]), accumulate)
        with pytest.raises(IndexError) as atens:
            torch.ops.aten.index_put_.default(b, [bad], torch.zeros(shape[1:]), accumulate)
        assert str(ours.value) == str(atens.value)
        torch.testing.assert_close(a, b, rtol=0, atol=0)  # nothing written before the error, as in ATen
