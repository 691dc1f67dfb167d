"""DDP's gradient reduction as collectives in the backward trace, overlapping the rest of the backward.

A model's backward under thunder is one autograd node: DDP's reducer, which all-reduces a bucket once every
gradient in it has been accumulated, would receive every gradient only when the whole backward has ended. So for
``thunder.jit(DistributedDataParallel(m))`` the reduction is written into the backward trace instead, as DDP does
it (see :mod:`thunder.distributed.boundaries` for when DDP's reducer does it instead):

- the parameters' gradients are grouped into buckets by DDP's own assignment
  (``torch.distributed._compute_bucket_assignment_by_size``, the function DDP calls) over the parameters in the
  order their gradients become final in the trace, with DDP's size limits (a small first bucket, then
  ``bucket_cap_mb``), as DDP's reducer rebuilds its buckets after the first iteration from the order the
  gradients became ready;
- right after a bucket's last gradient is computed: the gradients flattened into one buffer, multiplied by
  ``1 / world size`` (DDP divides before it sums), and ``all_reduce(sum)`` issued, without waiting (in place:
  the buffer is the trace's own, read by nothing else);
- at the end of the backward: each bucket waited for, in issue order, and split back into the gradients' shapes.

In the synchronizing step after steps under ``no_sync()`` the parameters' ``.grad`` hold the gradients accumulated
without reduction, which DDP reduces together with the new ones: there each gradient is added to its parameter's
``.grad`` (read when the bucket is issued, :func:`with_accumulated_grad`) before it is bucketed, and the reduced
result written into ``.grad`` (:func:`set_reduced_grad`) instead of handed to autograd, which would add it to the
unreduced sum; the buckets overlap the backward as in any step.

Collectives are ``side_effect`` symbols: nothing moves across them, so a reduction is issued where it is written
and the rest of the backward runs while it is in flight. Every rank issues the same buckets in the same order
as long as every rank's backward trace is the same program (as DDP assumes that the ranks' backwards match).

Where the trace cannot hold every parameter's gradient it raises :class:`NeedsDDPReducer`, and DDP's reducer
reduces instead: a parameter the forward does not use, and a program that runs as segments (it reads values from
tensor data: there is no single backward). A parameter whose gradient PyTorch's autograd may accumulate inside
thunder's backward (``torch.utils.checkpoint``) is refused: DDP's reducer would finish its iteration at the end of
that inner backward and reduce too early.
"""

from __future__ import annotations

import torch

from thunder.core.errors import UnsupportedError
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceProvenance, from_trace, tracectx
from thunder.distributed.engine_state import group_name, keyed_object, object_key
from thunder.torch.registry import torchsymbol
from thunder.transforms.transform import Transform

__all__ = ["DDPGradientBuckets", "NeedsDDPReducer", "set_reduced_grad", "with_accumulated_grad", "IMPLEMENTATIONS"]

_ISLAND_BACKWARD = "torch.thunder.grad.torch_island.backward"  # PyTorch's autograd run inside thunder's backward


class NeedsDDPReducer(UnsupportedError):
    """The backward trace cannot all-reduce this program's gradients as DDP would: DDP's reducer must."""


# reads and writes of a parameter's .grad, where the trace runs: every rank's backward does them in one place
TAGS = ("side_effect",)


@torchsymbol(tags=TAGS)
def with_accumulated_grad(grad, key: str):
    """``grad`` plus the gradient accumulated in the ``.grad`` of the parameter ``key`` (none: ``grad``)."""
    return TensorProxy(shape=tuple(grad.shape), dtype=grad.dtype, device=grad.device)


@torchsymbol(tags=TAGS)
def set_reduced_grad(grad, key: str):
    """Writes the reduced ``grad`` into the ``.grad`` of the parameter ``key``, as DDP's reducer does."""
    return None


def add_accumulated_grad(grad: torch.Tensor, key: str) -> torch.Tensor:
    accumulated = keyed_object(key).grad
    return grad if accumulated is None else accumulated + grad


def write_reduced_grad(grad: torch.Tensor, key: str) -> None:
    param = keyed_object(key)
    with torch.no_grad():
        if param.grad is None:
            param.grad = grad
        else:
            param.grad.copy_(grad)
    run_post_accumulate_grad_hooks(param)


def run_post_accumulate_grad_hooks(param) -> None:
    """The parameter's post-accumulate-grad hooks, which autograd runs after it accumulates a gradient."""
    for hook in (getattr(param, "_post_accumulate_grad_hooks", None) or {}).values():
        hook(param)


IMPLEMENTATIONS = {with_accumulated_grad: "thunder.distributed.gradient_buckets.add_accumulated_grad",
                   set_reduced_grad: "thunder.distributed.gradient_buckets.write_reduced_grad"}


class DDPGradientBuckets(Transform):
    """Writes ``ddp``'s bucketed gradient all-reduce into the backward trace of its module. ``accumulated``: the
    reduction of the synchronizing step after ``no_sync()`` steps, of each gradient plus the parameter's ``.grad``,
    written into ``.grad``."""

    segments_error = NeedsDDPReducer
    remedy_on_segments = "DDP's reducer reduces the gradients of such a program, outside the trace"

    def __init__(self, ddp, *, accumulated: bool = False):
        self.ddp, self.accumulated = ddp, accumulated

    def transform_backward_pre_lowering(self, backward, *, inputs, differentiable_inputs, **kwargs):
        import time

        start = time.perf_counter_ns()
        params = _reduced_parameters(self.ddp)
        outputs = gradient_outputs(backward, inputs, differentiable_inputs, params)
        missing = [name for key, (name, _) in params.items() if key not in outputs]
        if missing and any(b.sym.id == _ISLAND_BACKWARD for b in backward.bound_symbols):
            # PyTorch's autograd may accumulate them inside thunder's backward, where DDP's reducer would finish
            # its iteration at the end of that inner backward, before the other gradients (they come out zero)
            raise UnsupportedError(
                f"thunder.jit of a DistributedDataParallel model whose parameters ({', '.join(missing)}) may get "
                "their gradients inside a call thunder runs under PyTorch's autograd (torch.utils.checkpoint, "
                "thunder.jit's checkpoint=, an autograd.Function or an op with no gradient rule) is not supported: "
                "neither thunder's backward trace nor DDP's reducer can reduce those gradients. Jit the model "
                "without activation checkpointing, or checkpoint outside the DDP model")
        if missing:
            raise NeedsDDPReducer(
                f"the parameters {', '.join(missing)} of the DistributedDataParallel module get no gradient from "
                "thunder's backward (the forward does not use them)")

        ready = ready_positions(backward)
        order = sorted(outputs, key=lambda key: max(ready.get(backward.output[k].name, -1) for k in outputs[key]))
        # each bucket: the output positions of each of its parameters' gradients, and the parameter's key where the
        # trace reads and writes its .grad
        keys = {key: object_key(params[key][1], params[key][0]) if self.accumulated else None for key in order}
        buckets = [[(outputs[order[b]], keys[order[b]]) for b in bucket]
                   for bucket in _bucket_assignment(self.ddp, [params[key][1] for key in order])]
        issued_after: dict[int, list[int]] = {}  # bound symbol index (-1: before the first) -> buckets issued then
        position = -1
        for i, bucket in enumerate(buckets):
            # after its last gradient, and not before the bucket before it: every rank issues them in one order
            position = max(position, *(ready.get(backward.output[k].name, -1) for ks, _ in bucket for k in ks))
            issued_after.setdefault(position, []).append(i)

        new = from_trace(backward)
        new_output = list(backward.output)
        world_size = self.ddp.process_group.size()
        name = group_name(self.ddp.process_group)
        reduced = {}  # bucket -> its pending all-reduce's output
        with tracectx(new):
            for j, bsym in [(-1, None), *enumerate(backward.bound_symbols)]:
                if bsym is not None:
                    new.bound_symbols.append(bsym)
                for i in issued_after.get(j, ()):
                    reduced[i] = _issue(backward, buckets[i], world_size, name)
            for i, bucket in enumerate(buckets):
                _unpack(backward, bucket, reduced[i], new_output)
        new.output = tuple(new_output)
        seconds = (time.perf_counter_ns() - start) / 1e9
        new.provenance = TraceProvenance(f"DDP gradient buckets: {len(buckets)} all-reduces overlapping the backward",
                                         seconds)
        return new


def _reduced_parameters(ddp) -> dict:
    """id -> (name, parameter) of the parameters DDP reduces: those requiring grad, not in its ignore list."""
    ignored = getattr(ddp, "parameters_to_ignore", set())
    return {id(p): (name, p) for name, p in ddp.module.named_parameters()
            if p.requires_grad and name not in ignored}


def gradient_outputs(backward, inputs, differentiable_inputs, tensors) -> dict[int, list[int]]:
    """id -> the positions of its gradients in the backward's outputs, for each of ``tensors`` (ids) that gets one
    (a tensor passed twice gets one per argument)."""
    outputs: dict[int, list[int]] = {}
    for k, i in enumerate(differentiable_inputs):
        value = inputs[i]
        if value is not None and id(value) in tensors and backward.output[k] is not None:
            outputs.setdefault(id(value), []).append(k)
    return outputs


def summed_gradient(backward, positions: list[int]) -> TensorProxy:
    """The gradient of a tensor passed as several arguments: the sum of its gradient outputs (recorded)."""
    import thunder.torch as ltorch

    grad = backward.output[positions[0]]
    for k in positions[1:]:
        grad = ltorch.add(grad, backward.output[k])
    return grad


def ready_positions(backward) -> dict[str, int]:
    """Name -> index of the bound symbol that produces it (inputs of the backward are absent)."""
    return {o.name: j for j, b in enumerate(backward.bound_symbols) for o in b.flat_proxy_outs}


def _bucket_assignment(ddp, parameters: list) -> list[list[int]]:
    """DDP's buckets over ``parameters`` (in the order their gradients become ready): its rebuilt buckets' limits,
    a small first bucket then ``bucket_cap_mb``, or the per-bucket limits it was given."""
    import torch.distributed as dist

    config = ddp._bucket_config
    if config.has_custom_per_bucket_caps:
        limits = list(config.per_bucket_bytes_caps)
    else:
        limits = [config.first_bucket_bytes_cap, config.bucket_bytes_cap]
    indices = list(range(len(parameters)))
    buckets, _ = dist._compute_bucket_assignment_by_size(parameters, limits, [False] * len(parameters), indices)
    return buckets


def _issue(backward, members: list, world_size: int, group_name: str) -> TensorProxy:
    """Records the flattening, scaling and all-reduce of one bucket (``members``: each parameter's gradient
    positions, and its key where its .grad is added); returns the pending all-reduce's output."""
    import thunder.torch as ltorch
    from thunder.distributed.collectives import all_reduce_temporary

    flat = []
    for positions, key in members:
        # a parameter passed as several arguments: DDP reduces its accumulated gradient
        grad = summed_gradient(backward, positions)
        if key is not None:
            grad = with_accumulated_grad(grad, key)
        flat.append(ltorch.reshape(grad, (-1,)))
    buffer = flat[0] if len(flat) == 1 else ltorch.cat(flat, 0)
    if world_size != 1:
        buffer = ltorch.mul(buffer, 1.0 / world_size)
    return all_reduce_temporary(buffer, "sum", group_name)


def _unpack(backward, members: list, reduced: TensorProxy, new_output: list) -> None:
    """Records the wait of one bucket and its gradients' views of it, as outputs of the backward (or written into
    the parameters' .grad, where they were added to it)."""
    import thunder.torch as ltorch
    from thunder.distributed.collectives import wait

    done = wait(reduced)
    firsts = [backward.output[positions[0]] for positions, _ in members]
    sizes = [int(_numel(g)) for g in firsts]
    pieces = (done,) if len(members) == 1 else ltorch.split(done, sizes)
    for (positions, key), grad, piece in zip(members, firsts, pieces):
        piece = piece if grad.ndim == 1 else ltorch.reshape(piece, tuple(grad.shape))
        if key is not None:
            set_reduced_grad(piece, key)
        new_output[positions[0]] = piece if key is None else None
        for k in positions[1:]:  # the autograd node gives the parameter its gradient once
            new_output[k] = None


def _numel(p) -> int:
    from thunder.core.proxies import pyval

    n = 1
    for d in p.shape:
        n *= pyval(d)
    return n
