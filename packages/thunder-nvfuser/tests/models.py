"""The parameters the nvFuser tests' optimizer steps update (the GPT block is thunder.testing.models.Block)."""

from __future__ import annotations

import torch
import torch.nn as nn


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
