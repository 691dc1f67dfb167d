"""``torch.func.functional_call`` inside a jitted function: PyTorch swaps the module's parameters and buffers for
the given tensors (by a path of its own to the module), runs it, and swaps them back. Reading back a tensor the
program put into the module is not an input (it raised an internal error: the prologue checked that the module
held a proxy)."""

import torch

import thunder


def test_functional_call_with_parameters_and_buffers_like_eager():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))

    def f(params, buffers, x):
        return torch.func.functional_call(net, (params, buffers), (x,))

    jf = thunder.jit(f)
    for step in range(3):  # new parameter values each call: nothing stale
        params = {k: (v.detach() * (step + 1)).requires_grad_() for k, v in net.named_parameters()}
        buffers = {k: v.clone() for k, v in net.named_buffers()}
        params_j = {k: v.detach().clone().requires_grad_() for k, v in params.items()}
        buffers_j = {k: v.clone() for k, v in buffers.items()}
        x = torch.randn(5, 3)
        expected, actual = f(params, buffers, x), jf(params_j, buffers_j, x)
        torch.testing.assert_close(actual, expected)
        expected.sum().backward()
        actual.sum().backward()
        for k in params:
            torch.testing.assert_close(params_j[k].grad, params[k].grad)
        for k in buffers:  # batch norm's running statistics, updated in the given buffers
            torch.testing.assert_close(buffers_j[k], buffers[k])
    assert thunder.cache_misses(jf) == 1
    assert all(p.grad is None for p in net.parameters())  # the module's own parameters were only swapped out
