"""The example executor's own kernel: sigmoid through tanh, 1/2 * (1 + tanh(x/2)), which never
overflows exp for large negative x. Out of place: autograd saves tanh's output for the backward, so
updating it in place would break gradients."""

import torch


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    # half-precision inputs are computed in float32 and rounded once, as PyTorch's own sigmoid does (three
    # roundings in bfloat16 differ from eager by an ulp)
    if x.dtype in (torch.bfloat16, torch.float16):
        return sigmoid(x.float()).to(x.dtype)
    return torch.tanh(x * 0.5) * 0.5 + 0.5
