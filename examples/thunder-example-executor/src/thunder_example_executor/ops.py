"""The example executor's own kernel: sigmoid through tanh, 1/2 * (1 + tanh(x/2)), which never
overflows exp for large negative x. Out of place: autograd saves tanh's output for the backward, so
updating it in place would break gradients."""

import torch


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * 0.5) * 0.5 + 0.5
