"""The example executor's own kernel: sigmoid through tanh, 1/2 * (1 + tanh(x/2)), which never
overflows exp for large negative x."""

import torch


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * 0.5).mul_(0.5).add_(0.5)
