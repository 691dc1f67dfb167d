"""The parameters the nvFuser tests' optimizer steps update (the GPT block is thunder.testing.models.Block)."""

from __future__ import annotations

import torch
import torch.nn as nn


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
