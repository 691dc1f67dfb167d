"""The programs the nvFuser tests trace: a GPT-2-style block and an optimizer step."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """Pre-norm transformer block: layer norms, fused-QKV causal attention, tanh-GELU MLP, residuals."""

    def __init__(self, n_embd=32, n_head=2):
        super().__init__()
        self.n_head = n_head
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.c_fc, self.mlp_proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


def parameters(shapes, device, dtype=torch.float32, seed=0) -> list[nn.Parameter]:
    """Parameters with gradients, one per shape (a transposed one among them when 3-d)."""
    g = torch.Generator().manual_seed(seed)
    params = []
    for s in shapes:
        p = nn.Parameter(torch.randn(s, generator=g, dtype=dtype).to(device))
        p.grad = torch.randn(s, generator=g, dtype=dtype).to(device)
        params.append(p)
    return params


SHAPES = [(8, 4), (16,), (3, 5, 2)]
