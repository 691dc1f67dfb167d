"""A GPT-style block (forward, and backward through thunder's autograd) and an optimizer step through the
Triton executor, against eager."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from triton_helpers import jit_triton, regions

import thunder

pytestmark = pytest.mark.usefixtures("triton_ex")


class Block(nn.Module):
    def __init__(self, n_embd=32, n_head=2):
        super().__init__()
        self.n_head = n_head
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.fc, self.proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

    def attn(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        att = att.masked_fill(torch.ones(T, T, dtype=torch.bool).tril().logical_not(), float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


def test_gpt_block_forward():
    torch.manual_seed(0)
    block = Block()
    x = torch.randn(2, 8, 32)
    jblock = jit_triton(block)
    with torch.no_grad():
        torch.testing.assert_close(jblock(x), block(x))
    found = regions(thunder.last_traces(jblock)[-1])
    # layer norms (2), the softmax, gelu and the residual adds end up in kernels
    assert len(found) >= 4, thunder.last_traces(jblock)[-1]


def test_gpt_block_backward():
    torch.manual_seed(0)
    block, ref = Block(), Block()
    ref.load_state_dict(block.state_dict())
    x = torch.randn(2, 8, 32, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    jblock = jit_triton(block)
    out = jblock(x)
    expected = ref(x_ref)
    torch.testing.assert_close(out, expected)
    grad = torch.randn_like(out)
    out.backward(grad)
    expected.backward(grad)
    torch.testing.assert_close(x.grad, x_ref.grad)
    for (name, p), p_ref in zip(block.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, p_ref.grad, msg=name)
    backward = thunder.last_backward_traces(jblock)
    if backward:  # backward traces are dispatched with the same executors: their elementwise work is fused
        assert regions(backward[-1]), backward[-1]


@pytest.mark.parametrize("opt_cls", [torch.optim.Adam, torch.optim.AdamW])
def test_optimizer_step_is_one_kernel_per_parameter(opt_cls):
    def params(seed):
        torch.manual_seed(seed)
        return [nn.Parameter(torch.randn(8, 4)), nn.Parameter(torch.randn(2, 3, 5).transpose(0, 2))]

    ps, refs = params(0), params(0)
    opt, ref_opt = opt_cls(ps, lr=0.01, foreach=False), opt_cls(refs, lr=0.01, foreach=False)
    step = jit_triton(opt.step)
    pointers = [p.data_ptr() for p in ps]
    for _ in range(3):
        for p, r in zip(ps, refs):
            g = torch.randn_like(p)
            p.grad, r.grad = g.clone(), g.clone()
        step()
        ref_opt.step()
    for p, r in zip(ps, refs):
        torch.testing.assert_close(p, r)
        for key, value in ref_opt.state[r].items():
            torch.testing.assert_close(opt.state[p][key], value, msg=key)
    assert [p.data_ptr() for p in ps] == pointers
    trace = thunder.last_traces(step)[-1]
    found = regions(trace)
    # per parameter: the step counter (a 0-d tensor read by .item()) and one kernel for the whole update,
    # which reads grad, exp_avg, exp_avg_sq and the parameter once and writes the last three in place
    big = [b for b in found if len(b.args[0].shape) > 0]
    assert len(big) == len(ps), trace
    assert not [b for b in trace.bound_symbols if "copy" in b.sym.name], trace
