"""A GPT-style block (forward, and backward through thunder's autograd) and an optimizer step through the
Triton executor, against eager (CPU tensors under the interpreter, CUDA tensors with a GPU)."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from triton_helpers import assert_close_in_norm, jit_triton, regions

import thunder
from thunder.testing.optimizers import assert_steps_match_eager

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
        att = att.masked_fill(torch.ones(T, T, dtype=torch.bool, device=x.device).tril().logical_not(), float("-inf"))
        y = torch.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


def test_gpt_block_forward(device, dtype):
    torch.manual_seed(0)
    block = Block().to(device, dtype)
    x = torch.randn(2, 8, 32, device=device, dtype=dtype)
    jblock = jit_triton(block)
    with torch.no_grad():
        assert_close_in_norm(jblock(x), block(x), dtype)
    found = regions(thunder.last_traces(jblock)[-1])
    # layer norms (2), the softmax, gelu and the residual adds end up in kernels
    assert len(found) >= 4, thunder.last_traces(jblock)[-1]


def test_gpt_block_backward(device, dtype):
    torch.manual_seed(0)
    block, ref = Block().to(device, dtype), Block().to(device, dtype)
    ref.load_state_dict(block.state_dict())
    x = torch.randn(2, 8, 32, device=device, dtype=dtype, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    jblock = jit_triton(block)
    out = jblock(x)
    expected = ref(x_ref)
    assert_close_in_norm(out, expected, dtype)
    grad = torch.randn_like(out)
    out.backward(grad)
    expected.backward(grad)
    assert_close_in_norm(x.grad, x_ref.grad, dtype, msg="x")
    for (name, p), p_ref in zip(block.named_parameters(), ref.parameters()):
        assert_close_in_norm(p.grad, p_ref.grad, dtype, msg=name)
    backward = thunder.last_backward_traces(jblock)
    if backward:  # backward traces are dispatched with the same executors: their elementwise work is fused
        assert regions(backward[-1]), backward[-1]


@pytest.mark.parametrize("opt_cls", [torch.optim.Adam, torch.optim.AdamW])
def test_optimizer_step_is_one_kernel_per_parameter(opt_cls, device):
    def params(seed):
        torch.manual_seed(seed)
        return [nn.Parameter(torch.randn(8, 4, device=device)),
                nn.Parameter(torch.randn(2, 3, 5, device=device).transpose(0, 2))]

    ps, refs = params(0), params(0)
    opt, ref_opt = opt_cls(ps, lr=0.01, foreach=False), opt_cls(refs, lr=0.01, foreach=False)
    step = jit_triton(opt.step)
    assert_steps_match_eager(step, opt, ref_opt, steps=3)
    trace = thunder.last_traces(step)[-1]
    found = regions(trace)
    # per parameter: the step counter (a 0-d tensor read by .item()) and one kernel for the whole update,
    # which reads grad, exp_avg, exp_avg_sq and the parameter once and writes the last three in place
    big = [b for b in found if len(b.args[0].shape) > 0]
    assert len(big) == len(ps), trace
    assert not [b for b in trace.bound_symbols if "copy" in b.sym.name], trace
