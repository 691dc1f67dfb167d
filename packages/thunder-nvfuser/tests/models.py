"""The programs the nvFuser tests trace: a GPT-2-style block, a Llama-style block, optimizer parameters.

They live here, not in ``thunder.testing``: ``thunder.jit`` runs code of the ``thunder`` package natively (it is
the torch language), so a model defined there would not be interpreted the way user code is."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


def parameters(shapes, device, dtype=torch.float32, seed=0) -> list[nn.Parameter]:
    """Parameters with gradients, one per shape; 3-d ones are transposed views (their updates are written into
    non-contiguous memory)."""
    g = torch.Generator().manual_seed(seed)
    params = []
    for s in shapes:
        if len(s) == 3:
            data = torch.randn(s[::-1], generator=g, dtype=dtype).to(device).transpose(0, 2)
        else:
            data = torch.randn(s, generator=g, dtype=dtype).to(device)
        p = nn.Parameter(data)
        p.grad = torch.randn(s, generator=g, dtype=dtype).to(device)
        params.append(p)
    return params


SHAPES = [(8, 4), (16,), (3, 5, 2)]


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


class LlamaBlock(nn.Module):
    """A Llama-style block: RMSNorm, rotary position embedding, grouped-query causal attention
    (``enable_gqa=True``), SwiGLU MLP, residuals."""

    def __init__(self, n_embd: int = 64, n_head: int = 4, n_kv_head: int = 2, hidden: int = 128, max_seq: int = 64):
        super().__init__()
        self.n_head, self.n_kv_head, self.head_dim = n_head, n_kv_head, n_embd // n_head
        self.norm_1, self.norm_2 = nn.RMSNorm(n_embd), nn.RMSNorm(n_embd)
        self.q = nn.Linear(n_embd, n_embd, bias=False)
        self.kv = nn.Linear(n_embd, 2 * n_kv_head * self.head_dim, bias=False)
        self.proj = nn.Linear(n_embd, n_embd, bias=False)
        self.gate, self.up = nn.Linear(n_embd, hidden, bias=False), nn.Linear(n_embd, hidden, bias=False)
        self.down = nn.Linear(hidden, n_embd, bias=False)
        angles = torch.outer(torch.arange(max_seq), 10000.0 ** (-torch.arange(0, self.head_dim, 2) / self.head_dim))
        self.register_buffer("cos", angles.cos().repeat(1, 2), persistent=False)
        self.register_buffer("sin", angles.sin().repeat(1, 2), persistent=False)

    def rope(self, x):
        T, half = x.shape[-2], self.head_dim // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * self.cos[:T].to(x.dtype) + rotated * self.sin[:T].to(x.dtype)

    def forward(self, x):
        B, T, C = x.shape
        h = self.norm_1(x)
        q = self.q(h).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k, v = self.kv(h).view(B, T, 2, self.n_kv_head, self.head_dim).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(self.rope(q), self.rope(k), v, is_causal=True, enable_gqa=True)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        h = self.norm_2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))
