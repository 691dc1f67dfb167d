"""Building the prologue trace: reach every outside value the computation used by its provenance
path, check what the compiled program assumed, and return the computation's inputs."""

from __future__ import annotations

import re

from thunder.core import dtypes, prims
from thunder.core.codegen import ObjectRef
from thunder.core.prims import AnyProxy
from thunder.core.trace import TraceCtx, tracectx
from thunder.interpreter import Provenance

__all__ = ["InputRecord", "build_prologue", "proxy_name_for"]


class InputRecord:
    """An outside value the traced program read: its provenance, the value, and what to check.

    ``check`` is one of "tensor" (the value is ``proxy``), "literal" (equality with ``value``),
    "len" (a list or tuple whose length was baked in), "is" (identity), or None (only a path step).
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
        reached: dict[Provenance, object] = {}
        if checks:
            prims.check_arg_count(args_p, kwargs_p, nargs, kwnames)

        parents = set()
        for r in records:
            p = r.provenance.parent
            while p is not None:
                parents.add(p)
                p = p.parent

        def reach(prov: Provenance, out=None):
            if prov in reached:
                return reached[prov]
            kind = prov.kind
            if kind == "fn":
                v = ObjectRef(fn, trace.make_unique_name("fn"))
                reached[prov] = v
                return v
            if kind == "arg":
                return _bind(prov, prims.unpack_item(args_p, prov.key), out)
            if kind == "kwarg":
                return _bind(prov, prims.unpack_item(kwargs_p, prov.key), out)
            if kind == "global":
                g = ObjectRef(prov.root, trace.make_unique_name(f"globals_{_module_tag(prov.root)}"))
                return _bind(prov, prims.unpack_item(g, prov.key), out)
            if kind == "builtin":
                b = ObjectRef(prov.root, trace.make_unique_name("builtins"))
                return _bind(prov, prims.unpack_item(b, prov.key), out)
            if kind == "closure_cell":
                cell = ObjectRef(prov.root, trace.make_unique_name(f"cell_{prov.key[2]}"))
                return _bind(prov, prims.unpack_cell(cell), out)
            if kind == "default":
                f = ObjectRef(prov.root, trace.make_unique_name("fn"))
                kwdefaults = prov.root.__kwdefaults__ or {}
                if prov.key in kwdefaults:
                    holder = prims.unpack_attr(f, "__kwdefaults__")
                    return _bind(prov, prims.unpack_item(holder, prov.key), out)
                code = prov.root.__code__
                positional = code.co_varnames[: code.co_argcount]
                index = positional.index(prov.key) - (len(positional) - len(prov.root.__defaults__))
                holder = prims.unpack_attr(f, "__defaults__")
                return _bind(prov, prims.unpack_item(holder, index), out)
            if kind == "attr":
                return _bind(prov, prims.unpack_attr(reach(prov.parent), prov.key), out)
            if kind == "item":
                return _bind(prov, prims.unpack_item(reach(prov.parent), prov.key), out)
            raise NotImplementedError(f"cannot re-reach a value with provenance {prov!r} in the prologue")

        def _bind(prov, value, out):
            if out is not None:
                # The last unpack of a computation input produces the computation's own proxy.
                bsym = trace.scopes[-1][-1]
                trace.scopes[-1][-1] = bsym.replace(output=out)
                value = out
            reached[prov] = value
            return value

        devices: dict = {}
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
                device = devices.setdefault(t.device, ObjectRef(t.device.to_torch(), trace.make_unique_name(
                    re.sub(r"\W", "_", f"device_{t.device}"))))
                prims.check_tensor(v, t.shape, device, dtypes.to_torch_dtype(t.dtype), t.requires_grad)
            elif not checks:
                continue
            elif r.check == "literal":
                prims.check_literal(reach(r.provenance), r.value)
            elif r.check == "len":
                prims.check_len(reach(r.provenance), len(r.value))
            elif r.check == "is" and r.provenance not in parents:
                prims.check_is(reach(r.provenance), ObjectRef(r.value, trace.make_unique_name(_ref_name(r.value))))
        trace.output = tuple(computation_args)
    return trace


def _module_tag(globals_dict) -> str:
    return re.sub(r"\W+", "_", str(globals_dict.get("__name__", "module")))


def _ref_name(obj) -> str:
    return re.sub(r"\W+", "_", getattr(obj, "__name__", type(obj).__name__)).strip("_") or "obj"


