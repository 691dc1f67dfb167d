"""Comparing a jitted function's output and its input's gradient with eager's, for tests."""

import torch


def assert_output_and_grad_like_eager(jfn, fn, x: torch.Tensor) -> None:
    """``jfn(x)`` equals ``fn(x)`` (on a copy of the leaf ``x``), and so do the gradients of their sums w.r.t. ``x``."""
    xe = x.detach().clone().requires_grad_()
    out, expected = jfn(x), fn(xe)
    torch.testing.assert_close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    torch.testing.assert_close(x.grad, xe.grad)
