"""One autograd node for all the segments of a call (frontend/segments.py).

Each segment is compiled as an ordinary forward/backward pair. Run one node per segment, PyTorch's engine chains
their backwards, at the cost of a node's bookkeeping per segment (its forward's and backward's Python, the engine's
buffers between nodes): tens of microseconds per segment, a tenth of a small MoE layer's step. Here the call runs
every segment's compiled forward itself (grad mode off, as inside a node), keeps what each saves, and records one
node whose inputs are the call's inputs that require grad and whose outputs are the program's differentiable
outputs. Its backward runs the segments' backwards in reverse order, handing each value's cotangent by name from
the segment that reads it to the one that made it, and summing the gradients of a value read by several segments.

The engine's checks stay: each segment's saved tensors are checked against their versions, freed after the
backward unless ``retain_graph``; a second backward raises eager's error; ``create_graph`` gives gradients that
require grad through a node that refuses a second differentiation. Where saved-tensor hooks are active
(``torch.utils.checkpoint``, ``save_on_cpu``), the call runs one node per segment, whose ``save_for_backward`` the
hooks see.
"""

from __future__ import annotations

import torch

from thunder.core.errors import UnsupportedError
from thunder.executors.torch_grad_accumulators import summing_into_given
from thunder.frontend.autograd_function import (
    _backward_creating_graph,
    backward_of,
    lone_views_detached,
    one_of_several_views,
    run_forward,
    view_made_outside,
)

__all__ = ["SegmentTape", "one_node_possible"]

_saved_tensor_hooks = torch._C._autograd._top_saved_tensors_default_hooks
_set_grad_enabled = torch._C._set_grad_enabled


# False: each segment its own node (slower on MoE routing: the weight gradients are not summed into one buffer), for
# comparing the two (tests/test_segment_node.py runs its programs both ways)
ONE_NODE_PER_CALL = True


def one_node_possible() -> bool:
    """Whether this call's segments may run as one node: grad mode on (otherwise no node is recorded at all) and no
    saved-tensor hooks (which must see each segment's saved tensors through ``save_for_backward``)."""
    return ONE_NODE_PER_CALL and torch.is_grad_enabled() and _saved_tensor_hooks(False) is None


class SegmentTape:
    """The segments one call ran with a backward to run, in order, each with what its forward saved."""

    __slots__ = ("steps", "ran", "input_names", "output_names", "pending")

    def __init__(self):
        self.steps: list = []  # (segment, SavedForBackward)
        self.ran: list = []  # every segment run, with a backward or not
        self.input_names: list[str] = []
        self.output_names: list[str] = []
        self.pending = None  # the outputs the node's forward returns, held only until it does

    def run(self, segment, args):
        """The flat outputs of ``segment`` on ``args``, its forward run as inside a node (grad mode off)."""
        _set_grad_enabled(False)
        self.ran.append(segment)
        node = segment.node
        if node is None:
            return segment.run(*args)
        flat, record = run_forward(node, args)
        if node.differentiable_outputs:  # an optimizer's step has none: its backward never runs
            self.steps.append((segment, record))
        return flat

    def finish(self, flat: list, names, env, grad_mode: bool) -> list:
        """``flat`` (the program's flat outputs, ``names`` theirs), the differentiable ones replaced by the outputs
        of the call's node; ``env``: name -> value of everything the call ran."""
        made = {n for segment, _ in self.steps for n in segment.grad_names}
        # the node's inputs: the values from outside the call that require grad. Not every tensor that requires grad
        # here: a view of such an input made by a segment (with grad mode off) requires grad too, with no history,
        # and taken for an input it would take the gradient its maker's backward must hand on (fuzz seed 436086)
        inside = set().union(*(segment.made_names for segment in self.ran))
        inputs = {}
        for segment, _ in self.steps:
            for n in segment.grad_arg_names:
                value = env[n]
                if n not in inside and value.requires_grad:
                    inputs[n] = value
        positions, outputs, seen = [], [], {}
        for k, (value, name) in enumerate(zip(flat, names)):
            if name in made and name not in inputs and isinstance(value, torch.Tensor):
                positions.append(k)
                if name not in seen:
                    seen[name] = len(outputs)
                    outputs.append(value)
        if not positions or not inputs:
            return flat
        _returning_shared_bases(flat, positions, made, env, seen, outputs)
        self.output_names = list(seen)
        self.input_names = list(inputs)
        held = {id(t) for t in outputs}
        for _, record in self.steps:  # a saved output held by the node it comes out of: a cycle, unless detached
            saved = record.saved
            if held.isdisjoint(map(id, saved)):  # the common case, without a Python loop over what a segment saves
                continue
            for i, t in enumerate(saved):
                if id(t) in held:
                    saved[i] = t.detach()
        self.pending = outputs
        _set_grad_enabled(grad_mode)
        made_by_node = _apply(self, *inputs.values())
        flat = list(flat)
        # one of the views unbind/split/chunk made (fuzz seed 591771), as the segment's own node makes it
        several = {segment.flat_names[i] for segment, _ in self.steps for i in segment.node.several}
        for k in positions:  # views of the inputs or of other outputs made again outside the node, as a node's are
            flat[k] = view_made_outside(made_by_node[seen[names[k]]], made_by_node, inputs.values())
            if names[k] in several:
                flat[k] = one_of_several_views(flat[k])
        return flat


def _returning_shared_bases(flat, positions, made, env, seen, outputs) -> None:
    """Adds to the node's ``outputs`` (``seen``: name -> position) each tensor a segment made with grad of which
    several of the program's outputs (at ``positions`` of ``flat``) are views: they are then made outside the node
    from it, and the caller may update them as eager's views of a non-leaf. A temporary inside the last segment is
    already among its outputs (autograd_function.bases_of_returned_views, as for a program of one segment): this
    finds those an earlier segment handed on."""
    views: dict[int, int] = {}
    for k in positions:
        t = flat[k]
        if t._is_view():
            views[id(t._base)] = views.get(id(t._base), 0) + 1
    if not any(n > 1 for n in views.values()):
        return
    for name in made:
        value = env.get(name)
        if name not in seen and isinstance(value, torch.Tensor) and views.get(id(value), 0) > 1:
            seen[name] = len(outputs)
            outputs.append(value)


class _Gradients:
    """The cotangents and gradients of one backward of the call's node, by name. ``owned``: names whose sum this
    backward made or whose tensor a segment's backward made as a fresh zero-filled buffer: it may add into them in
    place (a segment's backward may hand on a cotangent it got as a gradient: not ours to write)."""

    __slots__ = ("pending", "owned", "fresh", "summed")

    def __init__(self):
        self.pending: dict = {}
        self.owned: set = set()
        # argument positions of the last segment's backward whose gradient is fresh; those it added into the sums
        # so far, which it was given
        self.fresh = self.summed = frozenset()

    def add(self, name: str, g, fresh: bool = False, summed: bool = False) -> None:
        old = self.pending.get(name)
        if old is None:
            self.pending[name] = g
            if fresh:
                self.owned.add(name)
        elif summed:
            pass  # g is old, with this gradient added
        elif name in self.owned:
            old.add_(g)
        elif fresh:
            self.pending[name] = g.add_(old)
            self.owned.add(name)
        else:
            self.pending[name] = old + g
            self.owned.add(name)

    def run_backward(self, arg_names):
        """How to run a segment's compiled backward (autograd_function.backward_of's ``run_backward``): where it
        makes zero-filled gradients of inputs whose sums this backward owns, the variant adding into those."""

        def run(compiled, unused, backward, saved, cotangents):
            variant = compiled.accumulating.get(unused, _NOT_BUILT)
            if variant is _NOT_BUILT:
                variant = compiled.accumulating[unused] = summing_into_given(compiled.specialized_traces[unused],
                                                                             compiled.n_saved)
            if variant is None:
                return backward(saved, *cotangents)
            summing, positions = variant
            names = [arg_names[compiled.differentiable_inputs[k]] for k in positions]
            self.fresh = frozenset(compiled.differentiable_inputs[k] for k in positions)
            if all(n in self.owned for n in names):
                self.summed = self.fresh
                return summing(saved, *cotangents, *[self.pending[n] for n in names])
            return backward(saved, *cotangents)

        return run


_NOT_BUILT = object()


def _backward(ctx, *cotangents):
    """The segments' backwards in reverse order: each gets the cotangents of its outputs (None where nothing after
    it used one) and adds the gradients of its inputs to those of the values they are."""
    tape = ctx.tape
    grads = _Gradients()
    for name, c in zip(tape.output_names, cotangents):
        if c is not None:
            grads.add(name, c)
    pending = grads.pending
    for segment, record in reversed(tape.steps):
        node, names = segment.node, segment.flat_names
        outs = [None] * len(names)
        given = False
        for i in node.differentiable_outputs:
            name = names[i]
            if name in segment.arg_set:  # an input handed on as it is: its cotangent is its maker's
                continue
            c = pending.pop(name, None)
            if c is not None:
                outs[i] = c
                given = True
        if not given:
            continue  # nothing after it used what it made: eager's engine would not run its nodes either
        if node.zero_cotangents is None and len(node.differentiable_outputs) > 1 \
                and any(outs[i] is None for i in node.differentiable_outputs):
            raise UnsupportedError("internal error: a segment's output without a cotangent has no zero to stand for "
                                   "it; please file an issue")
        arg_names = segment.arg_names
        grads.fresh = grads.summed = frozenset()
        result = backward_of(node, record, outs, grads.run_backward(arg_names))
        fresh, summed = grads.fresh, grads.summed
        for i, g in enumerate(result):
            if g is not None:
                grads.add(arg_names[i], g, i in fresh, i in summed)
    return (None, *[pending.get(n) for n in tape.input_names])


class ThunderSegmentsFunction(torch.autograd.Function):
    """The node of one call of a program run as segments; ``grad_fn`` shows ``ThunderSegmentsFunctionBackward``."""

    @staticmethod
    def forward(ctx, tape, *inputs):
        ctx.tape = tape
        ctx.set_materialize_grads(False)  # an output the loss does not use: its segment's backward skips it
        outputs, tape.pending = tape.pending, None
        # a view a node returns cannot be updated in place: see autograd_function.views_made_outside
        return lone_views_detached(outputs, inputs, range(len(outputs)))

    @staticmethod
    def backward(ctx, *cotangents):
        if torch.is_grad_enabled():  # create_graph=True
            return _backward_creating_graph(ctx, *cotangents, backward=_backward)
        return _backward(ctx, *cotangents)


# the C++ apply (see autograd_function.differentiable_computation): the prologue has checked that no functorch
# transform is active
_apply = super(torch.autograd.Function, ThunderSegmentsFunction).apply
