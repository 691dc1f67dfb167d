"""Splitting a Dynamo graph into what thunder compiles and what it cannot.

Each call in the FX graph is tried on proxies (shapes and dtypes from Dynamo's example values) in a scratch
trace, the way thunder.jit would record it: a call that records is supported; one that raises (thunder refuses
the op, or its meta rejects the arguments) is not, and the exception is the reason. Consecutive calls of the
same kind form one region (``torch.fx.passes.split_module``); thunder regions go to ``thunder.jit``, the
others to TorchInductor, and :class:`SplitReason` records why each call left thunder.
"""

from __future__ import annotations

import dataclasses
import enum

import torch

__all__ = ["SplitReasonType", "SplitReason", "SubgraphInfo", "split_for_thunder"]


class SplitReasonType(enum.Enum):
    UNSUPPORTED_NODE = enum.auto()  # a kind of graph node thunder does not take
    MISSING_OP_SUPPORT = enum.auto()  # thunder refuses the operation
    EXCEPTION_PROXY_THUNDER_OP = enum.auto()  # building proxies for the call's arguments failed
    EXCEPTION_META_THUNDER_OP = enum.auto()  # the operation's meta rejected these arguments


@dataclasses.dataclass(frozen=True)
class SplitReason:
    reason_type: SplitReasonType
    info: str | None
    exception: str | None = None


@dataclasses.dataclass(frozen=True)
class SubgraphInfo:
    """What ThunderCompiler made of one Dynamo graph. ``thunder_compiled_fns`` are the thunder.jit callables of
    its thunder regions; ``split_reasons`` is empty when the whole graph went to thunder."""

    original_graph_module: torch.fx.GraphModule
    original_split_graph_module: torch.fx.GraphModule | None
    split_graph_module: torch.fx.GraphModule | None
    thunder_compiled_fns: list
    submodule_to_compiled_functions: dict
    split_reasons: list


# calls with effects on process state that thunder.jit handles (grad mode, autocast regions); never run while
# checking, since running them would change the state of this process
_HANDLED_STATE_CALLS = {torch._C._set_grad_enabled, torch.amp.autocast_mode._enter_autocast,
                        torch.amp.autocast_mode._exit_autocast}


def _proxy_of(value):
    from thunder.frontend.proxify import tensor_proxy

    if isinstance(value, torch.Tensor):
        return tensor_proxy(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_proxy_of(v) for v in value)
    if isinstance(value, torch.SymInt):
        return int(value.node.hint) if value.node.hint is not None else value
    return value


def _example(node):
    return _proxy_of(node.meta.get("example_value"))


def _check_node(node, env: dict, gm) -> SplitReason | None:
    """Records ``node`` on proxies into the current scratch trace; returns why not when thunder cannot."""
    from thunder.core.proxies import torch_function_table

    target = node.target
    if node.op == "call_function" and target in _HANDLED_STATE_CALLS:
        env[node.name] = _example(node)
        return None
    try:
        args = torch.fx.node.map_arg(node.args, lambda n: env[n.name])
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n.name])
    except Exception as e:
        return SplitReason(SplitReasonType.EXCEPTION_PROXY_THUNDER_OP, node.format_node(), f"{type(e).__name__}: {e}")
    from thunder.core.errors import UnsupportedError

    try:
        if node.op == "call_function":
            # the torch-language symbol when there is one (a creation with no tensor argument would not reach it
            # through __torch_function__), else the callable itself
            result = torch_function_table.get(target, target)(*args, **kwargs)
        elif node.op == "call_method":
            result = getattr(args[0], target)(*args[1:], **kwargs)
        else:  # call_module: thunder.jit traces into modules; checking them here would need their parameters
            result = _example(node)
    except UnsupportedError as e:
        return SplitReason(SplitReasonType.MISSING_OP_SUPPORT, node.format_node(), f"{type(e).__name__}: {e}")
    except Exception as e:
        return SplitReason(SplitReasonType.EXCEPTION_META_THUNDER_OP, node.format_node(), f"{type(e).__name__}: {e}")
    env[node.name] = _proxy_of(result)  # a tensor made from no proxy (a creation) stands for what the trace makes
    return None


def find_unsupported(gm: torch.fx.GraphModule) -> dict:
    """node -> SplitReason, for the calls thunder cannot take."""
    import warnings

    from thunder.core.trace import TraceCtx, tracectx

    env: dict = {}
    unsupported: dict = {}
    scratch = TraceCtx("check")
    with tracectx(scratch), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # opaque-fallback notices belong to the real compilation
        for node in gm.graph.nodes:
            if node.op in ("placeholder", "get_attr"):
                env[node.name] = _example(node) if node.op == "placeholder" else _proxy_of(_attribute(gm, node))
            elif node.op in ("call_function", "call_method", "call_module"):
                reason = _check_node(node, env, gm)
                if reason is not None:
                    unsupported[node] = reason
                    env[node.name] = _example(node)  # what follows is checked on the value eager computes
    return unsupported


def _attribute(gm, node):
    value = gm
    for part in node.target.split("."):
        value = getattr(value, part)
    return value


def split_for_thunder(gm: torch.fx.GraphModule, unsupported: dict):
    """(the split graph module, {submodule name: whether thunder takes it}): consecutive calls of the same kind
    in one region; placeholders, attributes and outputs join their neighbours."""
    from torch.fx.passes.split_module import split_module

    partition_of: dict = {}
    current, supported_now, kinds = 0, None, {}
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        supported = node not in unsupported
        if supported_now is not None and supported != supported_now:
            current += 1
        supported_now = supported
        partition_of[node] = current
        kinds[current] = supported

    def callback(node) -> int:
        if node in partition_of:
            return partition_of[node]
        users = [partition_of[u] for u in node.users if u in partition_of]  # an attribute goes where it is used
        return min(users) if users else current

    split = split_module(gm, gm, callback, keep_original_order=True)
    return split, {f"submod_{i}": ok for i, ok in kinds.items()}
