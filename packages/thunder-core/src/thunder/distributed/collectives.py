"""Collectives as symbols of the trace: ``all_reduce``, ``all_gather``, ``reduce_scatter`` and ``wait``.

PyTorch's functional collectives (``torch.distributed._functional_collectives``, the API tensor-parallel code and
DTensor use) return a new tensor and leave the communication pending until ``wait_tensor``. Called inside a jitted
function they are recorded as these symbols, so transforms see them, and the torch executor runs each as the very
``torch.ops._c10d_functional`` op (thunder never communicates by itself). Each is tagged ``side_effect``: every
rank must issue the same collectives in the same order, so dead-code elimination never drops one and
common-subexpression elimination never merges two.

Gathering and scattering are along dim 0, as the ops do. Gradient rules (thunder differentiates them even where
eager's ops have no autograd formula, which matches ``_c10d_functional_autograd`` where it has one):
``all_reduce`` of a sum is an all-reduce (sum) of the cotangent, of an average an average; ``all_gather`` is a
reduce-scatter (sum) of the cotangent; ``reduce_scatter`` of a sum (average) is an all-gather of the cotangent
(divided by the group's size); ``wait`` passes the cotangent through.
"""

from __future__ import annotations

import torch
import torch.distributed._functional_collectives  # noqa: F401  (defines _c10d_functional._wrap_tensor_autograd)

from thunder import torch as ltorch
from thunder.core.errors import UnsupportedError, check, user_location_suffix
from thunder.core.proxies import TensorProxy, pyval, torch_function_table
from thunder.distributed.engine_state import group_name
from thunder.grad.registry import register_grad
from thunder.torch.inplace import update
from thunder.torch.registry import torchsymbol

__all__ = ["all_reduce", "all_reduce_temporary", "all_gather", "reduce_scatter", "wait", "IMPLEMENTATIONS"]

TAGS = ("side_effect",)
_OPS = torch.ops._c10d_functional
_AUTOGRAD_OPS = torch.ops._c10d_functional_autograd
_DIFFERENTIABLE_REDUCTIONS = ("sum", "avg")


def _like(a: TensorProxy, shape) -> TensorProxy:
    return TensorProxy(shape=tuple(shape), dtype=a.dtype, device=a.device, requires_grad=a.requires_grad)


@torchsymbol(_OPS.all_reduce, _OPS.all_reduce.default, tags=TAGS)
def all_reduce(a, reduce_op: str, group_name: str):
    return _like(a, a.shape)


@torchsymbol(_OPS.all_gather_into_tensor, _OPS.all_gather_into_tensor.default, _AUTOGRAD_OPS.all_gather_into_tensor,
             _AUTOGRAD_OPS.all_gather_into_tensor.default, tags=TAGS)
def all_gather(a, group_size: int, group_name: str):
    return _like(a, (a.shape[0] * pyval(group_size), *a.shape[1:]))


@torchsymbol(_OPS.reduce_scatter_tensor, _OPS.reduce_scatter_tensor.default, _AUTOGRAD_OPS.reduce_scatter_tensor,
             _AUTOGRAD_OPS.reduce_scatter_tensor.default, tags=TAGS)
def reduce_scatter(a, reduce_op: str, group_size: int, group_name: str):
    size = pyval(group_size)
    check(pyval(a.shape[0]) % size == 0,
          lambda: f"reduce_scatter: dim 0 of size {a.shape[0]} does not split into {size} equal shards", ValueError)
    return _like(a, (a.shape[0] // size, *a.shape[1:]))


# DDP's gradient buckets (thunder/distributed/gradient_buckets.py): an all-reduce of a buffer the trace made for
# it and reads nowhere else, so the op reduces it in place (the functional all_reduce copies its input first); no
# torch function maps to it
@torchsymbol(tags=TAGS)
def all_reduce_temporary(a, reduce_op: str, group_name: str):
    return _like(a, a.shape)


# _wrap_tensor_autograd hands an autograd variant's result over as a tensor that waits when first used;
# collective_wait: moved down to just before its result is read (thunder/transforms/collective_waits.py)
@torchsymbol(_OPS.wait_tensor, _OPS.wait_tensor.default, _OPS._wrap_tensor_autograd,
             _OPS._wrap_tensor_autograd.default, tags=(*TAGS, "collective_wait"))
def wait(a):
    return _like(a, a.shape)


# torch.distributed's in-place collectives: the functional collective, waited for, written into the destination
# (functionalization makes later reads see it). Only synchronous calls: a pending Work handle cannot be traced.

def _group(group, async_op: bool, what: str):
    if async_op:
        raise UnsupportedError(f"torch.distributed.{what}(async_op=True) is not supported by thunder yet"
                               f"{user_location_suffix()}: call it with async_op=False, or use the functional "
                               "collectives (torch.distributed._functional_collectives), which wait on first use")
    group = torch.distributed.group.WORLD if group is None else group
    return group_name(group), torch.distributed.get_world_size(group)


def _write(out, result, what: str) -> None:
    check(tuple(out.shape) == tuple(result.shape) and out.dtype is result.dtype,
          lambda: f"{what}: the output tensor ({out.type_string()}) does not match the result ({result.type_string()})")
    update(out, result)


def _all_reduce_inplace(tensor, op=torch.distributed.ReduceOp.SUM, group=None, async_op=False):
    name, _ = _group(group, async_op, "all_reduce")
    _write(tensor, wait(all_reduce(tensor, op.name.lower(), name)), "all_reduce")


def _all_gather_into_tensor_inplace(output_tensor, input_tensor, group=None, async_op=False):
    name, size = _group(group, async_op, "all_gather_into_tensor")
    _write(output_tensor, wait(all_gather(input_tensor, size, name)), "all_gather_into_tensor")


def _reduce_scatter_tensor_inplace(output, input, op=torch.distributed.ReduceOp.SUM, group=None, async_op=False):
    name, size = _group(group, async_op, "reduce_scatter_tensor")
    _write(output, wait(reduce_scatter(input, op.name.lower(), size, name)), "reduce_scatter_tensor")


torch_function_table[torch.distributed.all_reduce] = _all_reduce_inplace
torch_function_table[torch.distributed.all_gather_into_tensor] = _all_gather_into_tensor_inplace
torch_function_table[torch.distributed.reduce_scatter_tensor] = _reduce_scatter_tensor_inplace


# the torch executor runs each as the op itself
IMPLEMENTATIONS = {
    all_reduce: "torch.ops._c10d_functional.all_reduce",
    all_reduce_temporary: "torch.ops._c10d_functional.all_reduce_",
    all_gather: "torch.ops._c10d_functional.all_gather_into_tensor",
    reduce_scatter: "torch.ops._c10d_functional.reduce_scatter_tensor",
    wait: "torch.ops._c10d_functional.wait_tensor",
}


def _differentiable(reduce_op: str, what: str) -> None:
    if reduce_op not in _DIFFERENTIABLE_REDUCTIONS:
        raise UnsupportedError(f"the gradient of {what} with reduce_op={reduce_op!r} is not supported: only "
                               f"{' and '.join(_DIFFERENTIABLE_REDUCTIONS)} are differentiable{user_location_suffix()}")


@register_grad(all_reduce)
def _all_reduce_grad(a, reduce_op, group_name):
    _differentiable(reduce_op, "all_reduce")
    return all_reduce(a, reduce_op, group_name), lambda g: {"a": wait(all_reduce(g, reduce_op, group_name))}


@register_grad(all_gather)
def _all_gather_grad(a, group_size, group_name):
    return all_gather(a, group_size, group_name), lambda g: {"a": wait(reduce_scatter(g, "sum", group_size,
                                                                                         group_name))}


@register_grad(reduce_scatter)
def _reduce_scatter_grad(a, reduce_op, group_size, group_name):
    _differentiable(reduce_op, "reduce_scatter")

    def backward(g):
        gathered = wait(all_gather(g, group_size, group_name))
        return {"a": ltorch.div(gathered, pyval(group_size)) if reduce_op == "avg" else gathered}

    return reduce_scatter(a, reduce_op, group_size, group_name), backward


@register_grad(wait)
def _wait_grad(a):
    return wait(a), lambda g: {"a": g}
