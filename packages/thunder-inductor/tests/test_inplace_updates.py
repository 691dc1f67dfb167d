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
