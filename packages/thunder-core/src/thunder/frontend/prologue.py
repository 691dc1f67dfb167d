"""Building the prologue trace: reach every outside value the computation used by its provenance
path, check what the compiled program assumed, and return the computation's inputs."""

from __future__ import annotations

import re

from thunder.core import dtypes, prims
from thunder.core.prims import AnyProxy
from thunder.core.trace import TraceCtx, tracectx
from thunder.frontend.paths import PathReacher
from thunder.interpreter import Provenance

__all__ = ["InputRecord", "build_prologue", "proxy_name_for"]


class InputRecord:
    """An outside value the traced program read: its provenance, the value, and what to check.

    ``check`` is one of "tensor" (the value is ``proxy``), "literal" (equality with ``value``),
    "len" (a list or tuple whose length was baked in), "is" (identity), "type" (the exact type), or None
    (only a path step).
    """

    __slots__ = ("provenance", "value", "check", "proxy")

    def __init__(self, provenance: Provenance, value, check: str | None, proxy=None):
        self.provenance, self.value, self.check, self.proxy = provenance, value, check, proxy


_SKIP_IN_NAMES = {"__dict__", "_parameters", "_modules", "_buffers"}


def proxy_name_for(prov: Provenance, fn) -> str:
    """A readable name from an access path: ``args[0]`` of ``f(a, b)`` -> ``a``;
    ``self.__dict__['_modules']['fc1'].__dict__['_parameters']['weight']`` -> ``fc1_weight``."""
    parts = []
    for kind, key in prov.path():
        if kind == "arg":
            parts.append(_parameter_name(fn, key))
        elif kind in ("kwarg", "global", "builtin", "closure_cell", "default", "attr", "item"):
            if str(key) not in _SKIP_IN_NAMES:
                parts.append(str(key))
    name = re.sub(r"\W+", "_", "_".join(parts)).strip("_") or "x"
    if name[0].isdigit() or name in ("args", "kwargs", "fn"):
        name = "t_" + name
    return name


def _parameter_name(fn, index: int) -> str:
    """The name of positional parameter ``index`` of ``fn`` (a function, bound method, or callable object
    such as a module, whose ``forward``/``__call__`` is used, skipping ``self``)."""
    skip = 0
    target = fn
    if not hasattr(getattr(fn, "__func__", fn), "__code__"):
        target = getattr(type(fn), "forward", None) or getattr(type(fn), "__call__", None)
        skip = 1
    elif hasattr(fn, "__func__"):
        target, skip = fn.__func__, 1
    code = getattr(target, "__code__", None)
    if code is not None and index + skip < code.co_argcount:
        return code.co_varnames[index + skip]
    return f"arg{index}"


def build_prologue(records: list[InputRecord], computation_args: list, fn, nargs: int, kwnames: tuple, *,
                   checks: bool = True) -> TraceCtx:
    """``checks=False`` (cache='same input') only unpacks the computation's inputs."""
    trace = TraceCtx("prologue")
    trace.names.update(p.name for p in computation_args)
    trace.args = ["*args", "**kwargs"]
    with tracectx(trace):
        args_p, kwargs_p = AnyProxy("args"), AnyProxy("kwargs")
        reacher = PathReacher(trace, fn, args_p, kwargs_p)
        reach = reacher.reach
        if checks:
            prims.check_arg_count(args_p, kwargs_p, nargs, kwnames)

        parents = set()
        for r in records:
            p = r.provenance.parent
            while p is not None:
                parents.add(p)
                p = p.parent

        checked: set = set()
        for r in records:
            if r.provenance in checked:
                continue  # the program read it more than once; one check suffices
            checked.add(r.provenance)
            if r.check == "tensor":
                t = r.proxy
                v = reach(r.provenance, out=t)
                if not checks:
                    continue
                device = reacher.ref(_torch_device(t.device), f"device_{t.device}")
                prims.check_tensor(v, t.shape, device, dtypes.to_torch_dtype(t.dtype), t.requires_grad)
            elif not checks:
                continue
            elif r.check == "literal":
                prims.check_literal(reach(r.provenance), r.value)
            elif r.check == "len":
                prims.check_len(reach(r.provenance), len(r.value))
            elif r.check == "type":
                prims.check_type(reach(r.provenance), reacher.ref(type(r.value), type(r.value).__name__))
            elif r.check == "is" and r.provenance not in parents:
                prims.check_is(reach(r.provenance), reacher.ref(r.value, _ref_name(r.value)))
        trace.output = tuple(computation_args)
    return trace


_devices: dict = {}


def _torch_device(device):
    # one torch.device object per device, so prologues compare against a constant
    if device not in _devices:
        _devices[device] = device.to_torch()
    return _devices[device]


def _ref_name(obj) -> str:
    return re.sub(r"\W+", "_", getattr(obj, "__name__", type(obj).__name__)).strip("_") or "obj"


