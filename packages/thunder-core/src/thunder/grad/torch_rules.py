"""Fused gradient rules of torch-language symbols.

Without a rule, a torch-language symbol is differentiated through its decomposition, so its forward
runs as the decomposition's prims. A rule here keeps the forward one call (``torch.softmax``) and
writes the backward with the formula PyTorch uses, saving what that formula needs.
"""

from __future__ import annotations

from thunder import torch as ltorch
from thunder.core import prims
from thunder.core.proxies import TensorProxy
from thunder.grad.registry import register_grad, register_nondifferentiable

__all__ = []

# ``detach`` is an alias autograd does not track
register_nondifferentiable(ltorch.detach)


def _tensor(x) -> bool:
    return isinstance(x, TensorProxy)


def _cast(x, dtype):
    return x if x.dtype is dtype else prims.convert_element_type(x, dtype)


@register_grad(ltorch.linear)
def _linear_grad(input, weight, bias=None):
    out = ltorch.linear(input, weight, bias)

    def backward(g):
        grads = {"input": ltorch.matmul(g, weight)}
        if weight.ndim == 2:
            g2 = ltorch.reshape(g, (-1, g.shape[-1])) if g.ndim != 2 else g
            x2 = ltorch.reshape(input, (-1, input.shape[-1])) if input.ndim != 2 else input
            grads["weight"] = ltorch.matmul(ltorch.t(g2), x2)
        else:  # one output feature
            grads["weight"] = ltorch.sum(ltorch.mul(ltorch.unsqueeze(g, -1), input), tuple(range(input.ndim - 1))) \
                if input.ndim > 1 else ltorch.mul(g, input)
        if _tensor(bias):
            grads["bias"] = ltorch.sum(g, tuple(range(g.ndim - bias.ndim))) if g.ndim > bias.ndim else g
        return grads

    return out, backward


@register_grad(ltorch.softmax)
def _softmax_grad(a, dim, dtype=None):
    out = ltorch.softmax(a, dim, dtype=dtype)

    def backward(g):
        # y * (g - sum(g * y)) in this order, as PyTorch's kernel computes it, in the output's dtype
        ga = ltorch.mul(out, ltorch.sub(g, ltorch.sum(ltorch.mul(g, out), dim, keepdim=True)))
        return {"a": _cast(ga, a.dtype)}

    return out, backward


@register_grad(ltorch.log_softmax)
def _log_softmax_grad(a, dim, dtype=None):
    out = ltorch.log_softmax(a, dim, dtype=dtype)

    def backward(g):
        ga = ltorch.sub(g, ltorch.mul(ltorch.exp(out), ltorch.sum(g, dim, keepdim=True)))
        return {"a": _cast(ga, a.dtype)}

    return out, backward
