"""FSDP2's backward prefetch in the compiled units' backward traces: the all-gather of the unit whose backward runs
next, issued at the start of this unit's backward and handed over to it pending.

With ``reshard_after_forward`` (ZERO3) each compiled unit's backward all-gathers its parameters again
(:mod:`thunder.distributed.fsdp_gradients`). FSDP2 overlaps that all-gather with the backward of the unit before:
each unit's pre-backward issues the all-gather of the unit whose forward ran just before its own (the one whose
backward runs next), or of the first of its ``set_modules_to_backward_prefetch`` targets. The backward traces do
the same:

- the prefetching unit's backward, right after gathering its own parameters, reads the target's current local
  shards (:func:`local_shard`: FSDP2's ``_sharded_param_data``, which its backward would gather from), records the
  target's all-gather input, and issues the all-gather and hands the pending result over
  (:func:`hand_over_all_gather`), unless one is pending for the target already (two units' prefetches naming the
  same target, one explicitly, one by default: FSDP2 gathers a unit once);
- the target's backward all-gathers through :func:`all_gather_unless_prefetched`: the result handed over for it,
  or, where none was (a target chosen differently this call), the all-gather issued then.

FSDP2's root unit around the blocks runs natively (thunder compiles the blocks): when its backward starts, the
last block's all-gather is issued by a compiled function of its own (:func:`issue_all_gather`) and handed over
(``thunder/distributed/boundaries.py``), as FSDP2's root prefetches it.

Which unit runs its backward next is known only when the backward runs (a unit's backward trace is built when its
forward first runs, before the units after it), so the handing over happens at run time, keyed by the target's
name. An all-gather handed over and not taken (the target's backward did not run, or ran through FSDP2's hooks) is
waited for when the autograd engine's backward ends.
"""

from __future__ import annotations

import torch

from thunder.core.proxies import TensorProxy, pyval
from thunder.distributed.engine_state import group_name, keyed_object, param_group
from thunder.frontend.hooks import interpreted_program
from thunder.torch.registry import torchsymbol

__all__ = ["all_gather_unless_prefetched", "hand_over_all_gather", "hand_over_pending", "handed_over", "issue_all_gather",
           "local_shard", "prefetch", "unit_key", "IMPLEMENTATIONS"]

TAGS = ("side_effect",)
_HANDED_OVER: dict = {}  # unit key -> the pending all-gather of its parameters, issued by the unit before


def unit_key(group) -> str:
    """How a trace names a unit (its parameter group) whose all-gather is handed over."""
    return f"{group._module_fqn or 'the model'}@{id(group)}"


@torchsymbol(tags=TAGS)
def local_shard(key: str):
    """The current local shard (FSDP2's padded flat ``_sharded_param_data``) of the sharded parameter ``key``."""
    data = keyed_object(key)._sharded_param_data
    return TensorProxy(shape=tuple(data.shape), dtype=data.dtype, device=data.device)


@torchsymbol(tags=TAGS)
def hand_over_all_gather(a, group_size: int, group_name: str, key: str):
    """Issues the all-gather of ``a`` and hands it over, pending, to the backward of the unit ``key``, unless one is
    pending for it already."""
    return None


@torchsymbol(tags=TAGS)
def all_gather_unless_prefetched(a, group_size: int, group_name: str, key: str):
    """The all-gather of ``a`` (pending), or the one handed over for the unit ``key`` in its place."""
    return TensorProxy(shape=(a.shape[0] * pyval(group_size), *a.shape[1:]), dtype=a.dtype, device=a.device)


def read_local_shard(key: str) -> torch.Tensor:
    return keyed_object(key)._sharded_param_data


def handed_over(key: str) -> bool:
    """Whether an all-gather is pending for the unit ``key``'s backward."""
    return key in _HANDED_OVER


def all_gather_and_hand_over(a: torch.Tensor, group_size: int, group_name: str, key: str) -> None:
    if key not in _HANDED_OVER:
        hand_over_pending(torch.ops._c10d_functional.all_gather_into_tensor(a, group_size, group_name), key)


def hand_over_pending(pending: torch.Tensor, key: str) -> None:
    _discard(key)
    _HANDED_OVER[key] = pending
    # what this backward leaves untaken is waited for when it ends
    torch.autograd.Variable._execution_engine.queue_callback(_discard_all)


def prefetched_or_all_gather(a: torch.Tensor, group_size: int, group_name: str, key: str) -> torch.Tensor:
    pending = _HANDED_OVER.pop(key, None)
    return torch.ops._c10d_functional.all_gather_into_tensor(a, group_size, group_name) if pending is None else pending


def _discard(key: str) -> None:
    pending = _HANDED_OVER.pop(key, None)
    if pending is not None:
        torch.ops._c10d_functional.wait_tensor(pending)


def _discard_all() -> None:
    for key in list(_HANDED_OVER):
        _discard(key)


IMPLEMENTATIONS = {
    local_shard: "thunder.distributed.fsdp_backward_prefetch.read_local_shard",
    hand_over_all_gather: "thunder.distributed.fsdp_backward_prefetch.all_gather_and_hand_over",
    all_gather_unless_prefetched: "thunder.distributed.fsdp_backward_prefetch.prefetched_or_all_gather",
}


@interpreted_program
def issue_all_gather(self, shards):
    """The pending all-gather of ``shards``, the unit ``self``'s (compiled on its own: the root's backward, which
    thunder does not compile, hands it over)."""
    from thunder.distributed.fsdp_gather import issue

    return issue(param_group(self), shards)


def prefetch(target_group) -> None:
    """Records, in the backward trace being built, the all-gather of ``target_group``'s parameters from their
    current shards, handed over pending to its backward (unless one is pending already)."""
    from thunder.distributed.fsdp_gather import all_gather_input, sharded_param_key

    shards = [local_shard(sharded_param_key(fsdp_param)) for fsdp_param in target_group.fsdp_params]
    process_group = target_group._all_gather_process_group
    hand_over_all_gather(all_gather_input(target_group, shards), process_group.size(), group_name(process_group),
                         unit_key(target_group))
