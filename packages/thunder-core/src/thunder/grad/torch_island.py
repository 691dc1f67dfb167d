"""Differentiating what thunder cannot look into: run it under PyTorch's autograd.

A bound symbol with no gradient rule and no decomposition (an opaque PyTorch call, a user's
``autograd.Function``, a checkpointed region, a ``cond`` with a tensor predicate) is compiled on its
own into a small Python function. The forward trace runs that function with PyTorch's autograd
recording it (an *island*) and keeps the recorded graph as a value saved for backward; the backward
trace hands the cotangents to ``torch.autograd.grad`` on that graph. Randomness, the user's backward
and checkpoint recomputation then behave exactly as in eager.
"""

from __future__ import annotations

import functools

import torch

from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.core.symbol import BoundSymbol, Symbol
from thunder.core.trace import TraceCtx

__all__ = ["IslandGraph", "island_symbol", "backward", "backward_symbol"]


class IslandGraph:
    """What an island's backward needs: the outputs PyTorch's autograd recorded and the leaves they came from."""

    __slots__ = ("outputs", "leaves", "output_mask", "unreached_is_none")

    def __init__(self, outputs, leaves, output_mask, unreached_is_none):
        self.outputs, self.leaves, self.output_mask = outputs, leaves, output_mask
        self.unreached_is_none = unreached_is_none


def _forward(fn, differentiable: tuple, unreached_is_none: tuple, *args):
    leaves = [a.detach().requires_grad_() if d else a for a, d in zip(args, differentiable)]
    with torch.enable_grad():
        out = fn(*leaves)
    flat, spec = tree_flatten(out)
    mask = tuple(isinstance(o, torch.Tensor) and o.requires_grad for o in flat)
    graph = IslandGraph(tuple(o for o, m in zip(flat, mask) if m), tuple(x for x, d in zip(leaves, differentiable) if d),
                        mask, unreached_is_none)
    detached = [o.detach() if m else o for o, m in zip(flat, mask)]
    return tree_unflatten(detached, spec), graph


def backward(graph: IslandGraph, cotangents: tuple) -> tuple:
    """Gradients of the island's differentiable inputs, given one cotangent per flat output (None or the node's zero of
    an unused output: unused).

    ``torch.autograd.backward`` rather than ``grad``: the region may read tensors that are not its inputs
    (a checkpointed function's parameters), which get their gradients accumulated as in eager, and a
    reentrant checkpoint refuses ``grad``. The leaves are this call's own detached inputs, so their
    ``.grad`` holds exactly this backward's gradients.
    """
    outs, grads = [], []
    for o, g in zip(graph.outputs, (c for c, m in zip(cotangents, graph.output_mask) if m)):
        # the zero standing for an output the loss does not use (frontend/autograd_function.py): eager's backward
        # never reaches that output's graph, so an input only it reaches gets None
        if g is not None and not getattr(g, "of_an_unused_output", False):
            outs.append(o)
            grads.append(g)
    if outs:
        # retain_graph: the outer backward may run again (retain_graph=True there); the island's graph
        # is released with the values the jitted call saved.
        torch.autograd.backward(outs, grads, retain_graph=True)
    result = []
    for leaf, none_ok in zip(graph.leaves, graph.unreached_is_none):
        g, leaf.grad = leaf.grad, None
        # an input no output depends on gets no gradient (None), as in eager; an intermediate gets zeros,
        # because the backward goes on computing with it
        result.append(g if g is not None or none_ok else torch.zeros_like(leaf))
    return tuple(result)


_counter = [0]


def island_symbol(bsym: BoundSymbol, inputs: list, differentiable: tuple, unreached_is_none: tuple) -> Symbol:
    """A symbol computing ``(bsym's output, IslandGraph)`` from ``inputs`` (bsym's flat proxy arguments)."""
    from thunder.core.trace import tracectx
    from thunder.extend import get_executor
    from thunder.transforms.dispatch import dispatch_to_executors

    alone = TraceCtx(f"{bsym.sym.name}_alone")
    alone.args = list(inputs)
    alone.bound_symbols = [bsym]
    alone.output = bsym.output
    alone.names = {p.name for p in (*inputs, *bsym.flat_proxy_outs)}
    with tracectx(alone):
        fn = dispatch_to_executors(alone, [get_executor("python"), get_executor("torch")]).python_callable()
    _counter[0] += 1
    name = f"{bsym.sym.name}_with_torch_autograd_{_counter[0]}"  # bound by name when compiled: unique
    torchex = get_executor("torch")
    # the tags stay: an island of an op that writes running statistics must not be dropped as dead code
    sym = Symbol(name, None, id=f"torch_island.{_counter[0]}.{bsym.sym.id}", is_prim=True, executor=torchex,
                 tags=bsym.sym.tags,
                 call_ctx={name: functools.partial(_forward, fn, differentiable, unreached_is_none)})
    torchex.register_implementation(sym, sym)
    return sym


_backward_symbol: list = []


def backward_symbol() -> Symbol:
    """``backward(graph, cotangents)`` as the torch executor's symbol (printed as an importable call)."""
    if not _backward_symbol:
        from thunder.extend import get_executor

        torchex = get_executor("torch")
        sym = torchex.register_operator("thunder.grad.torch_island.backward")
        torchex.register_implementation(sym, sym)
        _backward_symbol.append(sym)
    return _backward_symbol[0]
