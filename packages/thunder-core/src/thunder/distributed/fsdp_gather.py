"""FSDP2's parameter all-gather of a compiled unit as collectives in its forward trace, with the next unit's
all-gather prefetched.

For a ``fully_shard`` unit whose forward thunder compiles (see :mod:`thunder.distributed.boundaries`), the jitted
function is :func:`forward_gathering` bound to the unit: it gets the unit's local shards (FSDP2's padded, flat
``_sharded_param_data``) and records FSDP2's ``foreach_all_gather`` for one unit:

- each shard cast to the parameters' dtype (``MixedPrecisionPolicy.param_dtype``), the shards concatenated into
  one buffer, ``all_gather`` issued and waited for (or only waited for: the unit before issued it, below);
- FSDP2's copy-out: the gathered buffer viewed rank by rank, each parameter's columns reshaped to its padded
  unsharded shape and cut to its rows;
- :func:`unsharded_param` makes each the parameter the forward computes with: a read of the unit's sharded
  parameter (a DTensor, FSDP2 did not unshard it) while tracing gives it (:func:`traced_unsharded`), so the
  model's own code runs unchanged;
- the next unit's all-gather (FSDP2's ``set_modules_to_forward_prefetch``) issued before this unit computes and
  returned pending: the next unit's trace waits for it.

Autograd does not differentiate the all-gather: the gradient of :func:`unsharded_param` is the unsharded gradient
itself, handed to the shard as :func:`unsharded_grad`, where :class:`~thunder.distributed.fsdp_gradients.FSDPReduceScatter`
finds it and writes FSDP2's reduce-scatter (in the reduce dtype, divided, into the sharded ``.grad``). The
backward reads the gathered parameters the forward saved, as FSDP2 does with ``reshard_after_forward=False``
(ZERO2); with ZERO3 the forward does not save them and the backward gathers them again (there, and in
:mod:`~thunder.distributed.fsdp_backward_prefetch` for the unit before).
"""

from __future__ import annotations

import weakref

import torch

from thunder.core.dtypes import is_float_dtype, to_torch_dtype
from thunder.core.proxies import TensorProxy
from thunder.core.pytree import tree_map
from thunder.core.shapes import numel
from thunder.core.trace import get_tracectx
from thunder.distributed.engine_state import group_name, object_key, param_group
from thunder.frontend.hooks import interpreted_program
from thunder.grad.registry import register_grad
from thunder.torch.registry import torchsymbol

__all__ = ["all_gather_input", "forward_gathering", "gathered", "issue", "sharded_param_key",
           "traced_unsharded", "unsharded_param", "unsharded_grad", "IMPLEMENTATIONS"]

# per trace being recorded: id(sharded parameter) -> the traced unsharded parameter that stands for it
_UNSHARDED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@torchsymbol()
def unsharded_param(gathered, shard, key: str):
    """``gathered``, the parameter gathered from ``shard`` (its gradient goes to ``shard``, see the module)."""
    return gathered.replace(requires_grad=shard.requires_grad)


@torchsymbol()
def unsharded_grad(grad, shard, key: str):
    """Stands for the gradient of ``shard``: the unsharded gradient ``grad``, which the backward's reduce-scatter
    (fsdp_gradients.py) replaces it with."""
    return shard.replace(requires_grad=False)


@register_grad(unsharded_param)
def _unsharded_param_grad(gathered, shard, key):
    return unsharded_param(gathered, shard, key), lambda g: {"shard": unsharded_grad(g, shard, key)}


def use_gathered(gathered: torch.Tensor, shard: torch.Tensor, key: str) -> torch.Tensor:
    return gathered


IMPLEMENTATIONS = {unsharded_param: "thunder.distributed.fsdp_gather.use_gathered"}


def sharded_param_key(fsdp_param) -> str:
    """How a trace names an FSDP2 parameter (its FSDPParam, looked up by :func:`~thunder.distributed.engine_state.keyed_object`
    when the trace runs)."""
    return object_key(fsdp_param, fsdp_param._param_fqn)


def traced_unsharded(value):
    """The traced unsharded parameter standing for ``value`` (a sharded parameter of the unit being traced), or
    None."""
    trace = get_tracectx()
    table = _UNSHARDED.get(trace) if trace is not None else None
    return None if table is None else table.get(id(value))


@interpreted_program
def forward_gathering(self, shards, pending, next_unit, next_shards, *args, **kwargs):
    """The compiled unit's forward (interpreted, ``self`` the unit): its parameters gathered from ``shards`` (or
    waited for from ``pending``), the next unit's all-gather issued (``next_unit``, ``next_shards``: None for
    none), then the module's own forward. Returns (output, the next unit's pending all-gather or None)."""
    args, kwargs, issued = gather(self, shards, pending, next_unit, next_shards, args, kwargs)
    return cast_output(self, type(self).forward(self, *args, **kwargs)), issued


def gather(unit, shards, pending, next_unit, next_shards, args, kwargs):
    """Records the unit's all-gather (or its wait), its copy-out, the next unit's all-gather and FSDP2's cast of
    the forward's inputs; returns (args, kwargs, the next unit's pending all-gather)."""
    group = param_group(unit)
    _UNSHARDED[get_tracectx()] = table = _UNSHARDED.get(get_tracectx(), {})
    params = gathered(group, issue(group, shards) if pending is None else pending)
    for fsdp_param, param, shard in zip(group.fsdp_params, params, shards):
        table[id(fsdp_param.sharded_param)] = unsharded_param(param, shard, sharded_param_key(fsdp_param))
    issued = issue(param_group(next_unit), next_shards) if next_unit is not None else None
    policy = unit._get_fsdp_state()._mp_policy
    if policy.cast_forward_inputs and policy.param_dtype is not None:
        args, kwargs = _cast_floats((args, kwargs), policy.param_dtype)
    return args, kwargs, issued


def cast_output(unit, output):
    policy = unit._get_fsdp_state()._mp_policy
    return output if policy.output_dtype is None else _cast_floats(output, policy.output_dtype)


def _cast_floats(tree, dtype):
    import thunder.torch as ltorch

    def cast(x):
        if isinstance(x, TensorProxy) and is_float_dtype(x.dtype):
            return ltorch.to(x, dtype=dtype)
        return x

    return tree_map(cast, tree)


def issue(group, shards) -> TensorProxy:
    """Records FSDP2's all-gather input of ``shards`` and the pending all-gather of it."""
    from thunder.distributed.collectives import all_gather

    process_group = group._all_gather_process_group
    return all_gather(all_gather_input(group, shards), process_group.size(), group_name(process_group))


def all_gather_input(group, shards) -> TensorProxy:
    """Records FSDP2's all-gather input: each padded flat shard in the parameters' dtype, concatenated."""
    import thunder.torch as ltorch

    flat = []
    for fsdp_param, shard in zip(group.fsdp_params, shards):
        s = ltorch.detach(shard)  # the gradient reaches the shard through unsharded_param, not the collective
        dtype = fsdp_param.param_dtype
        flat.append(ltorch.to(s, dtype=dtype) if dtype is not None and to_torch_dtype(s.dtype) != dtype else s)
    return flat[0] if len(flat) == 1 else ltorch.cat(flat, 0)


def gathered(group, pending: TensorProxy) -> list:
    """Records the wait for the group's all-gather and FSDP2's copy-out: the unsharded parameters (rank r's part
    of each is the r-th row of its columns)."""
    import thunder.torch as ltorch
    from thunder.distributed.collectives import wait

    world_size = group._all_gather_process_group.size()
    by_rank = ltorch.reshape(wait(pending), (world_size, -1))
    widths = [numel(p.padded_sharded_param_size) for p in group.fsdp_params]
    columns = (by_rank,) if len(widths) == 1 else ltorch.split(by_rank, widths, 1)
    params = []
    for fsdp_param, column in zip(group.fsdp_params, columns):
        rows, *rest = fsdp_param.padded_sharded_param_size
        full = ltorch.reshape(column, (rows * world_size, *rest))
        size = tuple(fsdp_param._orig_size)
        params.append(full if size[0] == rows * world_size else ltorch.narrow(full, 0, 0, size[0]))
    return params
