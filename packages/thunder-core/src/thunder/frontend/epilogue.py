"""The epilogue: replays the program's writes to outside state after the computation, on every call,
and assembles return values that are objects from outside the function (which must be the caller's
objects, not copies made at trace time).

``epilogue(values, *args, **kwargs)`` receives what only the computation knows (tensors and numbers
computed in the trace), re-reaches outside objects by provenance from the call's arguments, performs
the writes in program order and returns the program's result.
"""

from __future__ import annotations

import types

import torch

from thunder.core import prims
from thunder.core.codegen import Construct
from thunder.core.errors import UnsupportedError
from thunder.core.prims import AnyProxy
from thunder.core.proxies import Proxy
from thunder.core.pytree import tree_flatten
from thunder.core.trace import TraceCtx, TraceProvenance, tracectx
from thunder.frontend.paths import PathReacher
from thunder.frontend.user_values import SymbolicSize

__all__ = ["build_epilogue", "needs_epilogue"]

_LITERALS = (bool, int, float, complex, str, bytes, type(None), torch.dtype, torch.device, torch.Size)
_CONTAINERS = (list, tuple, dict, set)


def _outside_objects_in(result, outside_by_id: dict, depth: int = 0) -> bool:
    entry = outside_by_id.get(id(result))
    if entry is not None and entry[0] is result and type(result) not in _LITERALS:
        return True
    if depth >= 8:
        return False
    if type(result) in _CONTAINERS:
        items = result.values() if type(result) is dict else result
        return any(_outside_objects_in(v, outside_by_id, depth + 1) for v in items)
    fields = getattr(type(result), "__dataclass_fields__", None)
    if fields is None:
        state = _plain_instance_state(result)
        items = state.values() if state is not None else ()
    else:  # a model output holding the caller's cache object: the epilogue must hand back this call's cache
        items = (getattr(result, n, None) for n in fields)
    return any(_outside_objects_in(v, outside_by_id, depth + 1) for v in items)


def _is_shared_definition(v) -> bool:
    if isinstance(v, (types.ModuleType, type, types.BuiltinFunctionType)):
        return True
    return isinstance(v, types.FunctionType) and "<locals>" not in v.__qualname__ and v.__closure__ is None


def _plain_instance_state(v) -> dict | None:
    """The attributes of an instance of a plain Python class (no __slots__ state, no custom allocation, not a
    tensor or module), which setting on a fresh ``tp.__new__(tp)`` makes an equal object; None otherwise."""
    tp = type(v)
    if tp.__new__ is not object.__new__ or isinstance(v, (torch.Tensor, torch.nn.Module)) or tp.__module__ == "builtins":
        return None
    if any(c.__dict__.get("__slots__") for c in tp.__mro__) or not hasattr(v, "__dict__"):
        return None
    return dict(vars(v))


def needs_epilogue(writes, result, outside_by_id: dict, raises: BaseException | None = None) -> bool:
    return bool(writes) or raises is not None or _outside_objects_in(result, outside_by_id)


def build_epilogue(writes, result, fn, outside_by_id: dict, names: set,
                   raises: BaseException | None = None) -> tuple[TraceCtx, list]:
    """(epilogue trace, the proxies the computation must hand to it, in order). ``raises``: the program
    raised this exception (``result`` is then None): the epilogue does the writes made before it, then raises
    a copy of it."""
    trace = TraceCtx("epilogue")
    trace.names.update(names)
    trace.args = ["values", "*args", "**kwargs"]
    handed: list[Proxy] = []
    with tracectx(trace):
        values_p = AnyProxy("values")
        reacher = PathReacher(trace, fn, AnyProxy("args"), AnyProxy("kwargs"))
        built: dict[int, object] = {}  # id(object) -> what the epilogue calls it: one object, one name

        def value_of(v, where: str):
            outside = outside_by_id.get(id(v))
            if isinstance(v, Proxy) and not (outside is not None and outside[0] is v):
                if not any(v is x for x in handed):
                    handed.append(v)  # first use: take it from the computation's hand-over tuple
                    prims.unpack_item(values_p, len(handed) - 1)
                    trace.scopes[-1][-1] = trace.scopes[-1][-1].replace(output=v)
                return v
            if type(v) in _LITERALS:
                return v
            if _is_shared_definition(v):
                return v  # a module, class or module-level function: the same object on every call
            if id(v) in built:
                if built[id(v)] is None:
                    raise UnsupportedError(
                        f"{where or 'the jitted function'} hands a {type(v).__name__} created inside the jitted "
                        "function that refers back to itself to the outside; thunder.jit does not rebuild cyclic "
                        "objects; keep it outside the jitted function or file an issue"
                    )
                return built[id(v)]
            outside = outside_by_id.get(id(v))
            if outside is not None and outside[0] is v:
                expr = reacher.reach(outside[1])
            elif getattr(type(v), "__dataclass_fields__", None) is not None:
                # a dataclass built by the program (a model output): built again, from its fields
                fields = {n: value_of(getattr(v, n), where) for n, f in type(v).__dataclass_fields__.items() if f.init}
                expr = prims.make_value(Construct(type(v), fields))
            elif (state := _plain_instance_state(v)) is not None:
                # an object of a plain Python class made by the program (a cache layer it keeps): made again
                # on every call with its state at the end of the call, which is what the outside sees
                built[id(v)] = None  # in progress: an object reaching itself is refused below
                fields = {k: value_of(x, where) for k, x in state.items()}
                expr = prims.make_value(Construct(type(v), fields, rebuild=True))
            elif type(v) is SymbolicSize:
                expr = prims.make_value(SymbolicSize(value_of(x, where) for x in v))
            elif type(v) in _CONTAINERS:
                items = v.items() if type(v) is dict else v
                if type(v) is dict:
                    literal = {k: value_of(x, where) for k, x in items}
                else:
                    literal = type(v)(value_of(x, where) for x in items)
                # containers are built once, so a value stored and returned is one object, as in CPython
                expr = prims.make_value(literal) if type(v) is not tuple else literal
            else:
                raise UnsupportedError(
                    f"{where or 'the jitted function'} hands a {type(v).__name__} created inside the jitted function to "
                    "the outside; thunder.jit replays stores and returns of tensors, numbers, strings, containers of "
                    "them, objects of plain Python classes and objects from outside the function, not of other new "
                    "objects; file an issue if you need it"
                )
            built[id(v)] = expr
            return expr

        # Outside objects in the result are the ones the program held: reach them before writes replace them.
        for leaf in tree_flatten(result)[0]:
            outside = outside_by_id.get(id(leaf))
            if outside is not None and outside[0] is leaf and type(leaf) not in _LITERALS:
                value_of(leaf, "")

        for w in writes:
            where = f"a write at {w.location}" if w.location is not None else "a write"
            start = len(trace.bound_symbols)
            _replay(w, reacher, lambda v: value_of(v, where))
            # what was read through the written location is stale now
            reacher.forget(w.location_provenance)
            if w.location is not None:
                for i in range(start, len(trace.bound_symbols)):
                    trace.bound_symbols[i] = trace.bound_symbols[i].replace(source=w.location)
        if raises is not None:
            prims.raise_exception(reacher.ref(raises, f"raised_{type(raises).__name__}"))
        trace.output = value_of(result, "the return value")
    trace.provenance = TraceProvenance("Epilogue (writes to outside state and outside objects returned)" if raises is None
                                       else "Epilogue (writes to outside state made before the raise, then the raise)")
    return trace, handed


def _replay(w, reacher: PathReacher, value_of) -> None:
    if w.kind == "call_function":
        args, kwargs = w.value
        prims.call_function(reacher.ref(w.key, w.key.__name__), *[value_of(a) for a in args],
                            **{k: value_of(v) for k, v in kwargs.items()})
        return
    if w.kind in ("global", "delete_global"):
        target = reacher.ref(w.target.root, f"globals_{w.target.root.get('__name__', 'module')}")
    elif w.kind in ("cell", "delete_cell"):
        target = reacher.ref(w.target.root, f"cell_{w.target.key[2]}")
    else:
        target = reacher.reach(w.target)
    if w.kind == "call":
        prims.call_method(target, w.key, *[value_of(a) for a in w.value])
    elif w.kind in ("global", "item"):
        prims.store_item(target, w.key, value_of(w.value))
    elif w.kind == "attr":
        prims.store_attr(target, w.key, value_of(w.value))
    elif w.kind == "cell":
        prims.store_cell(target, value_of(w.value))
    elif w.kind in ("delete_global", "delete_item"):
        prims.delete_item(target, w.key)
    elif w.kind == "delete_attr":
        prims.delete_attr(target, w.key)
    elif w.kind == "delete_cell":
        prims.delete_cell(target)
