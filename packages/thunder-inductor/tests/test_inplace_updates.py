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
