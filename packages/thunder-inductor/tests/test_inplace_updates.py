import re

import pytest
import torch

import thunder


def test_inplace_update_of_an_input_is_stored_by_the_compiled_graph(inductor_ex):
    def fn(x, y):
        x.mul_(2).add_(y)
        return x.sum()

    x, y = torch.randn(4, 5), torch.randn(4, 5)
    xj = x.clone()
    jfn = thunder.jit(fn, executors=[inductor_ex])
    torch.testing.assert_close(jfn(xj, y), fn(x, y))
    torch.testing.assert_close(xj, x)
    trace = thunder.last_traces(jfn)[-1]
    fusions = [b for b in trace.bound_symbols if b.sym.id.startswith("inductor.")]
    assert any(s.sym.id == "prims.copy_to_out_" for b in fusions for s in b.subsymbols)
    # a second call updates again (the cached program keeps the write)
    jfn(xj, y)
    fn(x, y)
    torch.testing.assert_close(xj, x)


def _adam_step(foreach):
    torch.manual_seed(0)
    params = [torch.randn(6, 5, requires_grad=True), torch.randn(5, requires_grad=True)]
    params_j = [p.detach().clone().requires_grad_() for p in params]
    for ps in (params, params_j):
        for p in ps:
            p.grad = torch.full_like(p, 0.5) * p.detach()
    opt = torch.optim.Adam(params, lr=1e-2, foreach=foreach)
    opt_j = torch.optim.Adam(params_j, lr=1e-2, foreach=foreach)
    return params, params_j, opt, opt_j


def test_adam_step_matches_eager(inductor_ex):
    params, params_j, opt, opt_j = _adam_step(foreach=False)
    jstep = thunder.jit(opt_j.step, executors=[inductor_ex])
    for _ in range(3):
        opt.step()
        jstep()
    for p, pj in zip(params, params_j):
        torch.testing.assert_close(pj, p)
    for p, pj in zip(params, params_j):
        for k in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(opt_j.state[pj][k], opt.state[p][k])
    trace = thunder.last_traces(jstep)[-1]
    assert any(b.sym.id.startswith("inductor.") for b in trace.bound_symbols)


def test_reads_before_and_after_an_inplace_update_see_the_right_values(inductor_ex):
    def fn(x, w):
        a = x * 2  # read before the write
        x.add_(1)
        b = (x @ w).tanh()  # an unclaimed reader of the updated value between claimed ops
        return a + x, b * 3

    x, w = torch.randn(4, 4), torch.randn(4, 4)
    xj = x.clone()
    jfn = thunder.jit(fn, executors=[inductor_ex])
    for got, want in zip(jfn(xj, w), fn(x, w)):
        torch.testing.assert_close(got, want)
    torch.testing.assert_close(xj, x)



def _kv_update(cache, pos, x, upto: int):  # litgpt's KVCache.forward, on a cache passed in
    k = cache[: x.shape[0], ...].index_copy_(2, pos, x)
    return (k[..., :upto, :] * 2).sum(-1)


def test_kv_cache_update_through_a_view_stays_one_inplace_store(inductor_ex):
    # the view the update writes through stays with the torch executor, which stores the new rows in place; in a
    # region, Inductor would hand back a copy and the whole cache would be copied twice to write one row
    cache, jcache = torch.zeros(2, 4, 16, 8), torch.zeros(2, 4, 16, 8)
    jupdate = thunder.jit(_kv_update, executors=[inductor_ex], cache="symbolic values")
    for step, pos in enumerate((3, 4, 5)):
        x = torch.randn(2, 4, 1, 8, generator=torch.Generator().manual_seed(step))
        expected = _kv_update(cache, torch.tensor([pos]), x, pos + 1)
        torch.testing.assert_close(jupdate(jcache, torch.tensor([pos]), x, pos + 1), expected)
        torch.testing.assert_close(jcache, cache, rtol=0, atol=0)
    trace = str(thunder.last_traces(jupdate)[-1])
    assert "inductor_fusion" in trace
    assert "torch.Tensor.index_copy_(" in trace and "torch.index_copy(" not in trace and "__setitem__" not in trace


def _kv_step(cache, pos, x, w, upto: int):  # a decode step's layer: the new keys computed, stored, attended to
    k = cache[: x.shape[0], ...].index_copy_(2, pos, (x @ w).tanh())
    return (k[..., :upto, :] * 2).sum(-1)


def _kv_step_into_the_cache_itself(cache, pos, x, w, upto: int):  # HF's StaticCache: self.keys.index_copy_(...)
    cache.index_copy_(2, pos, (x @ w).tanh())
    return (cache[..., :upto, :] * 2).sum(-1)


def _kv_step_at_a_position_the_region_computes(cache, pos, x, w, upto: int):  # no check before the region
    k = cache[: x.shape[0], ...].index_copy_(2, (pos + 1) * (x.sum() < 1e9), (x @ w).tanh())
    return (k[..., :upto, :] * 2).sum(-1)


def _kv_step_reading_the_cache_before(cache, pos, x, w, upto: int):
    before = cache.sum()  # another read of the cache's memory: the region would get two aliases of it
    k = cache[: x.shape[0], ...].index_copy_(2, pos, (x @ w).tanh())
    return (k[..., :upto, :] * 2).sum(-1) + before


@pytest.mark.parametrize("fn", [_kv_step, _kv_step_into_the_cache_itself, _kv_step_at_a_position_the_region_computes,
                                _kv_step_reading_the_cache_before])
def test_kv_cache_store_joins_the_region_computing_the_new_rows(inductor_ex, fn):
    # Inductor writes the new rows into the cache in place, fused with their producer, and the read of the cache
    # after the store stays in the same region: one region, no index_copy_ of the torch executor, the cache the same
    # tensor as eager's with the same values. Where the region would get the cache twice (another read of its memory
    # before the store) or computes the positions (they could not be checked before it) the store stays with the
    # torch executor.
    w = torch.randn(8, 8, generator=torch.Generator().manual_seed(9))
    cache, jcache = torch.zeros(2, 4, 16, 8), torch.zeros(2, 4, 16, 8)
    storage = jcache.data_ptr()
    jstep = thunder.jit(fn, executors=[inductor_ex], cache="symbolic values")
    for step, pos in enumerate((3, 4, 5, 6)):
        x = torch.randn(2, 4, 1, 8, generator=torch.Generator().manual_seed(step))
        expected = fn(cache, torch.tensor([pos]), x, w, pos + 1)
        torch.testing.assert_close(jstep(jcache, torch.tensor([pos]), x, w, pos + 1), expected)
        torch.testing.assert_close(jcache, cache)  # (Inductor's tanh: 1 ulp)
    assert jcache.data_ptr() == storage
    trace = str(thunder.last_traces(jstep)[-1])
    taken = fn in (_kv_step, _kv_step_into_the_cache_itself)
    torch_store = re.search(r"^  torch\.Tensor\.index_copy_\(", trace, re.MULTILINE)  # a line of its own
    assert (torch_store is None) is taken, trace
    if taken:
        assert trace.count("= inductor_fusion") == 1, trace


@pytest.mark.parametrize("pos", [16, -1, 40])
def test_kv_cache_store_in_a_region_raises_eagers_index_error(inductor_ex, pos):
    # Inductor's kernel checks indices with its own RuntimeError and wraps negative ones; the region checks them
    # first and runs its torch calls where one is out of range: eager's IndexError, eager's cache afterwards
    w = torch.randn(8, 8, generator=torch.Generator().manual_seed(9))
    cache, jcache = torch.zeros(2, 4, 16, 8), torch.zeros(2, 4, 16, 8)
    jstep = thunder.jit(_kv_step, executors=[inductor_ex], cache="symbolic values")
    for p in (3, 4):
        x = torch.randn(2, 4, 1, 8, generator=torch.Generator().manual_seed(p))
        _kv_step(cache, torch.tensor([p]), x, w, p + 1)
        jstep(jcache, torch.tensor([p]), x, w, p + 1)
    x = torch.randn(2, 4, 2, 8)
    index = torch.tensor([5, pos])
    with pytest.raises(IndexError) as eager:
        _kv_step(cache, index, x, w, 6)
    with pytest.raises(IndexError) as jitted:
        jstep(jcache, index, x, w, 6)
    assert str(jitted.value) == str(eager.value)
    torch.testing.assert_close(jcache, cache)  # (Inductor's tanh: 1 ulp)
