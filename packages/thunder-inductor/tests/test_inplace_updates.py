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


def _kv_step_at_a_position_the_region_computes(cache, pos, x, w, upto: int):  # computed before it, then checked
    k = cache[: x.shape[0], ...].index_copy_(2, (pos + 1) * (x.sum() < 1e9), (x @ w).tanh())
    return (k[..., :upto, :] * 2).sum(-1)


def _kv_step_at_a_position_the_region_updates(cache, pos, x, w, upto: int):  # StaticCache's cumulative_length.add_
    pos.add_((x @ w).sum() > 1e9)  # a write in the region before the position is read: no check before it
    k = cache[: x.shape[0], ...].index_copy_(2, pos + 1, (x @ w).tanh())
    return (k[..., :upto, :] * 2).sum(-1)


def _kv_step_at_a_position_read_before_an_update(cache, pos, x, w, upto: int):  # HF's StaticCache
    at = torch.arange(x.shape[2]) + pos
    pos.add_(x.shape[2])  # the cache's length, updated in the region after the position was computed from it
    cache.index_copy_(2, at, (x @ w).tanh())
    return (cache[..., :upto, :] * 2).sum(-1)


def _kv_step_reading_the_cache_before(cache, pos, x, w, upto: int):
    before = cache.sum()  # another read of the cache's memory: the region would get two aliases of it
    k = cache[: x.shape[0], ...].index_copy_(2, pos, (x @ w).tanh())
    return (k[..., :upto, :] * 2).sum(-1) + before


@pytest.mark.parametrize("fn", [_kv_step, _kv_step_into_the_cache_itself, _kv_step_at_a_position_the_region_computes,
                                _kv_step_at_a_position_the_region_updates, _kv_step_at_a_position_read_before_an_update,
                                _kv_step_reading_the_cache_before])
def test_kv_cache_store_joins_the_region_computing_the_new_rows(inductor_ex, fn):
    # Inductor writes the new rows into the cache in place, fused with their producer, and the read of the cache
    # after the store stays in the same region: one region, no index_copy_ of the torch executor, the cache the same
    # tensor as eager's with the same values. Where the region would get the cache twice (another read of its memory
    # before the store) or computes the positions from a value it writes before (they could not be checked before
    # it) the store stays with the torch executor; positions computed from values it does not write are computed
    # before it (``arange(n) + cumulative_length`` in HF's StaticCache, read before its ``add_``) and checked.
    w = torch.randn(8, 8, generator=torch.Generator().manual_seed(9))
    cache, jcache = torch.zeros(2, 4, 16, 8), torch.zeros(2, 4, 16, 8)
    storage = jcache.data_ptr()
    jstep = thunder.jit(fn, executors=[inductor_ex], cache="symbolic values")
    for step, pos in enumerate((3, 4, 5, 6)):
        x = torch.randn(2, 4, 1, 8, generator=torch.Generator().manual_seed(step))
        at, jat = torch.tensor([pos]), torch.tensor([pos])
        expected = fn(cache, at, x, w, pos + 2)
        torch.testing.assert_close(jstep(jcache, jat, x, w, pos + 2), expected)
        torch.testing.assert_close(jcache, cache)  # (Inductor's tanh: 1 ulp)
        assert torch.equal(jat, at)
    assert jcache.data_ptr() == storage
    trace = str(thunder.last_traces(jstep)[-1])
    taken = fn not in (_kv_step_at_a_position_the_region_updates, _kv_step_reading_the_cache_before)
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


class _StaticLayer:
    """HF transformers' ``StaticLayer`` (cache_utils.py, 4.5x-5.x), its decode path: fixed-size key and value
    tensors written in place at ``arange(n) + cumulative_length``, a 0-d tensor the update advances in place."""

    def __init__(self, batch, heads, max_len, dim):
        self.keys, self.values = torch.zeros(batch, heads, max_len, dim), torch.zeros(batch, heads, max_len, dim)
        self.cumulative_length = torch.tensor(0)

    def update(self, key_states, value_states):
        kv_length = key_states.shape[-2]
        cache_position = torch.arange(kv_length) + self.cumulative_length
        self.cumulative_length.add_(kv_length)
        self.keys.index_copy_(2, cache_position, key_states)
        self.values.index_copy_(2, cache_position, value_states)
        return self.keys, self.values


class _TinyDecoder(torch.nn.Module):
    """Two attention layers over a static cache, masked to the positions written (as HF's causal mask over the
    whole static cache), RoPE-like rotation of the keys: the shape of a StaticCache decode step."""

    def __init__(self, vocab=32, dim=16, heads=2, layers=2):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(dim, 3 * dim) for _ in range(layers))
        self.out = torch.nn.Linear(dim, vocab)
        self.heads = heads

    def forward(self, ids, layers):
        b, n = ids.shape
        h = self.embed(ids)
        start = layers[0].cumulative_length
        for qkv, layer in zip(self.qkv, layers):
            q, k, v = qkv(h).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
            k = k * torch.cos(k) + torch.sin(k)
            keys, values = layer.update(k, v)
            position = torch.arange(n) + start
            mask = torch.arange(keys.shape[2]) <= position[:, None]
            a = torch.nn.functional.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
            h = h + a.transpose(1, 2).reshape(b, n, -1)
        return self.out(h)


def test_static_cache_decode_stores_join_the_region(inductor_ex):
    # HF's StaticCache computes each store's positions in the step (arange(n) + cumulative_length, read before its
    # add_): they are computed before the region and checked, the stores join the region, and the step is one
    # region. Tokens, the cache's keys, values and length as eager's; the cache tensors written in place.
    torch.manual_seed(0)
    model = _TinyDecoder().eval()
    jmodel = thunder.jit(model, executors=[inductor_ex], cache="symbolic values")

    def generate(fn, caches):
        ids, tokens = torch.tensor([[3, 1, 4, 1, 5]]), []
        for _ in range(6):
            token = fn(ids, caches)[:, -1:].argmax(-1)
            tokens.append(token)
            ids = token
        return torch.cat(tokens, 1)

    with torch.no_grad():
        caches = [_StaticLayer(1, 2, 16, 8) for _ in range(2)]
        jcaches = [_StaticLayer(1, 2, 16, 8) for _ in range(2)]
        storage = [c.keys.data_ptr() for c in jcaches]
        assert torch.equal(generate(jmodel, jcaches), generate(model, caches))
    for c, jc in zip(caches, jcaches):
        torch.testing.assert_close(jc.keys, c.keys)
        torch.testing.assert_close(jc.values, c.values)
        assert torch.equal(jc.cumulative_length, c.cumulative_length)
    assert [c.keys.data_ptr() for c in jcaches] == storage
    assert thunder.cache_misses(jmodel) == 2
    trace = str(thunder.last_traces(jmodel)[-1])
    assert re.search(r"^  torch\.Tensor\.index_copy_\(", trace, re.MULTILINE) is None, trace  # only in the region
    assert trace.count("= inductor_fusion") == 1, trace
