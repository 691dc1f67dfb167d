"""Gradient rules: how each symbol is differentiated (vector-Jacobian products), keyed by symbol id.

A rule is called with a bound symbol's arguments while the forward trace is being recorded. It
records the forward computation (usually the symbol itself) and returns ``(output, backward)``;
``backward(*cotangents)`` is called later while the backward trace is recorded, with one cotangent
per output (None for outputs that are not differentiable), and returns the gradients of the
arguments with the arguments' structure (None where an argument gets no gradient). Proxies of the
forward trace that ``backward`` uses are what the forward saves for backward.

Prims have rules in :mod:`thunder.grad.prim_rules`; torch-language symbols may register fused rules
(:mod:`thunder.grad.torch_rules`) instead of being differentiated through their decompositions; an
executor may register rules for the symbols it claims (``Executor.register_grad_rule``). A symbol with
neither a rule nor a decomposition (an opaque PyTorch call, a higher-order call) runs under PyTorch's
autograd (:mod:`thunder.grad.torch_island`).
"""

from thunder.grad.registry import (
    grad_rule,
    grad_rules,
    needs_grad,
    nondifferentiable,
    register_grad,
    register_nondifferentiable,
)

__all__ = ["register_grad", "grad_rule", "grad_rules", "register_nondifferentiable", "nondifferentiable", "needs_grad"]
