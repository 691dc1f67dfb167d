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

from thunder.core.errors import UnsupportedError
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceProvenance, from_trace, tracectx
from thunder.distributed.engine_state import group_name
from thunder.transforms.transform import Transform

__all__ = ["DDPGradientBuckets", "NeedsDDPReducer"]

_ISLAND_BACKWARD = "torch.thunder.grad.torch_island.backward"  # PyTorch's autograd run inside thunder's backward


class NeedsDDPReducer(UnsupportedError):
    """The backward trace cannot all-reduce this program's gradients as DDP would: DDP's reducer must."""


class DDPGradientBuckets(Transform):
    """Writes ``ddp``'s bucketed gradient all-reduce into the backward trace of its module."""

    segments_error = NeedsDDPReducer
    remedy_on_segments = "DDP's reducer reduces the gradients of such a program, outside the trace"

    def __init__(self, ddp):
        self.ddp = ddp

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
        # each bucket: the output positions of each of its parameters' gradients
        buckets = [[outputs[order[b]] for b in bucket]
                   for bucket in _bucket_assignment(self.ddp, [params[key][1] for key in order])]
        issued_after: dict[int, list[int]] = {}  # bound symbol index (-1: before the first) -> buckets issued then
        position = -1
        for i, bucket in enumerate(buckets):
            # after its last gradient, and not before the bucket before it: every rank issues them in one order
            position = max(position, *(ready.get(backward.output[k].name, -1) for ks in bucket for k in ks))
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


def _issue(backward, members: list[list[int]], world_size: int, group_name: str) -> TensorProxy:
    """Records the flattening, scaling and all-reduce of one bucket; returns the pending all-reduce's output."""
    import thunder.torch as ltorch
    from thunder.distributed.collectives import all_reduce_temporary

    # a parameter passed as several arguments: DDP reduces its accumulated gradient
    flat = [ltorch.reshape(summed_gradient(backward, positions), (-1,)) for positions in members]
    buffer = flat[0] if len(flat) == 1 else ltorch.cat(flat, 0)
    if world_size != 1:
        buffer = ltorch.mul(buffer, 1.0 / world_size)
    return all_reduce_temporary(buffer, "sum", group_name)


def _unpack(backward, members: list[list[int]], reduced: TensorProxy, new_output: list) -> None:
    """Records the wait of one bucket and its gradients' views of it, as outputs of the backward."""
    import thunder.torch as ltorch
    from thunder.distributed.collectives import wait

    done = wait(reduced)
    firsts = [backward.output[positions[0]] for positions in members]
    sizes = [int(_numel(g)) for g in firsts]
    pieces = (done,) if len(members) == 1 else ltorch.split(done, sizes)
    for positions, grad, piece in zip(members, firsts, pieces):
        new_output[positions[0]] = piece if grad.ndim == 1 else ltorch.reshape(piece, tuple(grad.shape))
        for k in positions[1:]:  # the autograd node gives the parameter its gradient once
            new_output[k] = None


def _numel(p) -> int:
    from thunder.core.proxies import pyval

    n = 1
    for d in p.shape:
        n *= pyval(d)
    return n
