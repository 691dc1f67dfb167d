"""Small models that tests and benchmarks of several packages share."""

from __future__ import annotations

import torch.nn as nn
import torch.nn.functional as F

__all__ = ["Block"]


class Block(nn.Module):
    """A GPT-2-style pre-norm transformer block: layer norms, fused-QKV causal ``scaled_dot_product_attention``,
    tanh-GELU MLP, residuals."""

    def __init__(self, n_embd: int = 32, n_head: int = 2):
        super().__init__()
        self.n_head = n_head
        self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
        self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
        self.fc, self.proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        x = x + self.c_proj(y)
        return x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))
