"""What the distributed traces read of torch.distributed's engine, in one place for DDP's and FSDP2's modules: the
name by which the functional collectives address a process group, an FSDP2 unit's parameter group, and the keys by
which a trace names an engine object it reaches only when it runs (a parameter whose ``.grad`` it writes)."""

from __future__ import annotations

import weakref

__all__ = ["group_name", "param_group", "object_key", "keyed_object"]

# key -> the object a trace names by it (object_key); a trace keeps no object alive
_KEYED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def group_name(group) -> str:
    """The name of ``group`` that torch's functional collectives (``torch.ops._c10d_functional``) take."""
    from torch.distributed._functional_collectives import _resolve_group_name

    return _resolve_group_name(group)


def param_group(unit):
    """The ``fully_shard`` unit's one FSDPParamGroup, or None (a unit with no parameters, or several groups)."""
    state = unit._get_fsdp_state()
    groups = getattr(state, "_fsdp_param_groups", None)
    if groups is not None and len(groups) != 1:
        return None
    return state._fsdp_param_group


def object_key(obj, name: str) -> str:
    """How a trace names ``obj`` (printed, readable: ``name`` first); :func:`keyed_object` looks it up when the
    trace runs."""
    key = f"{name}@{id(obj)}"
    _KEYED[key] = obj
    return key


def keyed_object(key: str):
    """The object a trace names ``key``."""
    return _KEYED[key]
