"""Whole forwards: an MLP and GPT-style transformer pieces, traced and compared with eager."""

import math

import pytest
import torch
import torch.nn.functional as F
from torchlang_helpers import check, f32

TOL = dict(rtol=1e-4, atol=1e-4)


def mlp(x, w1, b1, w2, b2):
    return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)


def test_mlp():
    traces = check(mlp, f32(8, 16), f32(32, 16), f32(32), f32(4, 32), f32(4), tol=TOL)
    src = traces["direct"].python()
    assert src.count("torch.nn.functional.linear(") == 2 and src.count("torch.nn.functional.gelu(") == 1


def causal_self_attention(x, attn_w, attn_b, proj_w, proj_b, n_head, manual_mask=None):
    B, T, C = x.size()
    q, k, v = F.linear(x, attn_w, attn_b).split(C, dim=2)
    q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
    k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
    v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
    if manual_mask is None:
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:  # nanoGPT's non-flash path
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(manual_mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
    y = y.transpose(1, 2).contiguous().view(B, T, C)
    return F.linear(y, proj_w, proj_b)


def block(x, params, n_head, manual_mask=None):
    (ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, fc2_w, fc2_b) = params
    C = x.shape[-1]
    x = x + causal_self_attention(F.layer_norm(x, (C,), ln1_w, ln1_b), attn_w, attn_b, proj_w, proj_b, n_head,
                                  manual_mask)
    h = F.gelu(F.linear(F.layer_norm(x, (C,), ln2_w, ln2_b), fc_w, fc_b), approximate="tanh")
    return x + F.linear(h, fc2_w, fc2_b)


def block_params(C):
    return [1 + 0.1 * f32(C), 0.1 * f32(C), f32(3 * C, C) / C**0.5, f32(3 * C), f32(C, C) / C**0.5, f32(C),
            1 + 0.1 * f32(C), 0.1 * f32(C), f32(4 * C, C) / C**0.5, f32(4 * C), f32(C, 4 * C) / (4 * C)**0.5, f32(C)]


def test_gpt_block():
    C, n_head = 16, 4
    traces = check(lambda x, *p: block(x, p, n_head), f32(2, 5, C), *block_params(C), tol=TOL)
    src = traces["direct"].python()
    for call in ("torch.nn.functional.layer_norm(", "torch.split(", "torch.nn.functional.scaled_dot_product_attention(",
                 "torch.nn.functional.gelu(", "torch.transpose("):
        assert call in src, call


def test_gpt_block_manual_attention():
    C, n_head, T = 16, 4, 6
    mask = torch.tril(torch.ones(8, 8)).view(1, 1, 8, 8)
    check(lambda x, m, *p: block(x, p, n_head, m), f32(2, T, C), mask, *block_params(C), tol=TOL)


def gpt(idx, pos, wte, wpe, lnf_w, lnf_b, targets, *params, n_head=2):
    x = F.embedding(idx, wte) + F.embedding(pos, wpe)
    x = F.dropout(x, 0.1, training=False)
    x = block(x, params, n_head)
    x = F.layer_norm(x, (x.size(-1),), lnf_w, lnf_b)
    logits = F.linear(x, wte)  # weight tying
    loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
    return logits, loss


@pytest.mark.parametrize("T", [1, 7])
def test_tiny_gpt_forward(T):
    V, C, B = 11, 8, 2
    idx = torch.randint(0, V, (B, T))
    targets = torch.randint(0, V, (B, T))
    targets[0, 0] = -1
    check(gpt, idx, torch.arange(T), f32(V, C), f32(16, C) * 0.1, 1 + 0.1 * f32(C), 0.1 * f32(C), targets,
          *block_params(C), tol=TOL)
