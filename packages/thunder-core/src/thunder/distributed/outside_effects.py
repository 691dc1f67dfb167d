"""What the jit refuses to trace through in torch.distributed, and why.

Seed 002's rule for opaque calls: a call whose effects lie outside the trace either runs on every call
or is refused, never only while tracing. The distributed engine's native objects (the process group and
its collectives, DDP's reducer and logger, the store) act on other processes and on the engine's own
state: run natively while tracing, they would happen once, and cache hits would skip them (DDP's gradient
buckets go out of step, an all-gather is missing). Their queries (``rank()``, ``size()``) are plain values.

A tensor that is a DTensor (FSDP2's sharded parameters) is refused as an input: its math would run on the
shard's metadata, silently unsharded. ``thunder.jit`` of the wrapped module itself runs the engine around
the compiled forward instead (see :mod:`thunder.distributed.boundaries`).
"""

from __future__ import annotations

import sys

from thunder.core.errors import UnsupportedError, user_location_suffix

__all__ = ["engine_lookaside", "check_module_call", "check_tensor_input", "traced_unsharded"]

# the engine's native classes whose methods communicate or change its state
_ENGINE_CLASSES = ("ProcessGroup", "Backend", "Work", "Reducer", "Logger", "Store")
# their methods that only read a value fixed for the process's lifetime
_QUERIES = frozenset({"rank", "size", "name", "group_name", "group_desc", "bound_device_id", "_get_backend_name",
                      "_id", "__eq__", "__hash__", "__repr__"})
_WHAT_TO_DO = ("jit the DistributedDataParallel or fully_shard-ed module itself (thunder.jit(model)), which runs "
               "the engine's per-call work on every call around the compiled forward, or make this call outside "
               "the jitted function")


def _engine_classes() -> tuple:
    c10d = sys.modules.get("torch._C._distributed_c10d")  # nothing of the engine exists before it loads
    return () if c10d is None else tuple(getattr(c10d, name) for name in _ENGINE_CLASSES)


def engine_lookaside(fn):
    """For a native function of torch.distributed's engine (a bound method, or a pybind11 function that gets its
    receiver as first argument), a stand-in that refuses calls on the engine's objects and runs the rest (placements' methods and
    getters); None for any other function."""
    if not (getattr(fn, "__module__", None) or "").startswith("torch._C._distributed"):
        return None
    name = getattr(fn, "__name__", "")
    if name in _QUERIES:
        return None

    def refuse_engine_calls(*args, **kwargs):
        classes = _engine_classes()
        bound = getattr(fn, "__self__", None)
        receiver = bound if isinstance(bound, classes) else args[0] if args and isinstance(args[0], classes) else None
        if receiver is not None:
            raise UnsupportedError(
                f"{type(receiver).__name__}.{name}() communicates or changes torch.distributed's state outside the "
                f"trace: thunder would run it only while tracing, not on every call{user_location_suffix()}. To "
                f"compile a distributed model, {_WHAT_TO_DO}")
        return fn(*args, **kwargs)

    return refuse_engine_calls


def traced_unsharded(value):
    """The traced unsharded parameter that stands for ``value`` where it is a sharded parameter of the FSDP2 unit
    whose forward is being traced (thunder.distributed.fsdp_gather gathers it in the trace), else None."""
    gather = sys.modules.get("thunder.distributed.fsdp_gather")  # no unit is traced before it loads
    return None if gather is None else gather.traced_unsharded(value)


def check_tensor_input(value) -> None:
    """Refuses a DTensor input (FSDP2's sharded parameters outside the engine's forward)."""
    dtensor = sys.modules.get("torch.distributed.tensor")  # no DTensor exists before torch.distributed.tensor loads
    if dtensor is not None and isinstance(value, dtensor.DTensor):
        raise UnsupportedError(
            f"a DTensor ({value.placements} on {value.device_mesh}) reached the jitted program: thunder does not "
            f"trace sharded tensors, and treating it as a plain tensor would silently compute unsharded"
            f"{user_location_suffix()}. To compile an FSDP2 model, {_WHAT_TO_DO}")


def check_module_call(module) -> None:
    """Refuses tracing a call of a ``fully_shard``-ed module: its hooks gather and free parameters and register
    the backward's reduce-scatter, work to do on every call."""
    fsdp = sys.modules.get("torch.distributed.fsdp")
    if fsdp is not None and isinstance(module, fsdp.FSDPModule):
        raise UnsupportedError(
            f"{type(module).__name__} is a fully_shard-ed module: its hooks all-gather its parameters before its "
            f"forward and reduce-scatter its gradients after its backward, which thunder would do only while "
            f"tracing{user_location_suffix()}. To compile an FSDP2 model, {_WHAT_TO_DO}")
