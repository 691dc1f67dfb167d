"""The call path: lookasides, interpreting Python functions, classes and callables, native calls."""

from __future__ import annotations

import functools
import types
import weakref

from .class_lookups import class_dependency, code_dependency, special_method
from .errors import InterpreterError, unsupported
from .frame import Frame
from .hashed_keys import hashed_arguments
from .provenance import Provenance
from .runtime import current_runtime
from .typeutil import NOTFOUND, lookup_type
from .wrapped import WrappedValue, computed

__all__ = ["call_value", "call_wrapped", "native_call", "bind_method"]

CO_VARARGS = 0x04
CO_VARKEYWORDS = 0x08
CO_ASYNC_FLAGS = 0x80 | 0x100 | 0x200  # coroutine, iterable coroutine, async generator


def native_call(fn, wargs, wkwargs) -> WrappedValue:
    rt = current_runtime()
    rt.hooks.on_native_call(fn, wargs, wkwargs)
    args = [w.value for w in wargs]
    kwargs = {k: w.value for k, w in wkwargs.items()}
    hashed_arguments(rt, fn, args)
    if (fn is type or fn is _TYPE_NEW) and rt.frames:
        _set_new_class_module(rt.frames[-1], fn, args)
    rt.native_arguments.append((args, kwargs))
    try:
        return computed(fn(*args, **kwargs))
    finally:
        rt.native_arguments.pop()


_TYPE_NEW = type.__new__


def _set_new_class_module(frame, fn, args):
    """``type(name, bases, ns)`` / ``type.__new__(meta, name, bases, ns)`` without ``__module__`` in ns
    take it from the calling Python frame's globals, which natively would be the interpreter's own:
    pass a copy of ns (type.__new__ copies it anyway) with the interpreted caller's ``__name__``."""
    index = 2 if fn is type else 3
    if len(args) != index + 1 or not isinstance(args[index], dict) or dict.__contains__(args[index], "__module__"):
        return
    module = frame.globals.get("__name__")
    if module is not None:
        ns = dict.copy(args[index])
        ns["__module__"] = module
        args[index] = ns


def bind_method(wobj: WrappedValue, descr) -> WrappedValue:
    """Bind a descriptor found on ``type(obj)`` to ``obj``, remembering the wrapped receiver."""
    obj = wobj.value
    if type(descr) is types.FunctionType:
        return WrappedValue(types.MethodType(descr, obj), Provenance.computed(), wobj)
    get = lookup_type(type(descr), "__get__")
    if get is not NOTFOUND:
        return WrappedValue(get(descr, obj, type(obj)), Provenance.computed(), wobj)
    return computed(descr)


def call_value(wfn: WrappedValue, wargs: list, wkwargs: dict) -> WrappedValue:
    """Call ``wfn`` with wrapped arguments the way the interpreted program would."""
    rt = current_runtime()
    fn = wfn.value
    hooks = rt.hooks

    replacement = hooks.wrapped_lookaside(fn)
    if replacement is not None:
        result = replacement(*wargs, **wkwargs)
        if not isinstance(result, WrappedValue):
            raise InterpreterError(
                f"wrapped_lookaside for {fn!r} returned {type(result).__name__}, expected a WrappedValue"
            )
        return result
    if type(fn) is weakref.ReferenceType and not wargs and not wkwargs and wfn.provenance.is_outside:
        # an outside weak reference's referent is outside state too, re-reached by calling the reference
        return rt.input(fn(), Provenance.deref(wfn.provenance))
    instead = hooks.interpreted_instead(fn)
    if instead is not None:
        from .derivation import derive_attr

        return call_value(derive_attr(rt, wfn, instead, getattr(fn, instead)), wargs, wkwargs)
    replacement = hooks.lookaside(fn)
    if replacement is not None:
        return native_call(replacement, wargs, wkwargs)

    from .builtins_lookasides import find_internal_lookaside

    internal = find_internal_lookaside(wfn)
    if internal is not None:
        impl, receiver = internal
        if receiver is not None:
            wargs = [receiver, *wargs]
        return impl(rt, wargs, wkwargs)

    tp = type(fn)
    if tp is types.FunctionType:
        if hooks.should_interpret(fn):
            code_dependency(rt, wfn)
            return interpret_function(rt, fn, wargs, wkwargs)
        return native_call(fn, wargs, wkwargs)
    if tp is types.MethodType:
        from .derivation import derive_attr

        wself = wfn.bound_self
        if wself is None or wself.value is not fn.__self__:
            wself = derive_attr(rt, wfn, "__self__", fn.__self__)
        # a bound method kept outside (an instance attribute, a global) runs the function it holds now
        wfunc = derive_attr(rt, wfn, "__func__", fn.__func__)
        return call_value(wfunc, [wself, *wargs], wkwargs)
    if tp is functools.partial:
        from .derivation import derive_attr, derive_item

        wpargs = derive_attr(rt, wfn, "args", fn.args)
        wpkw = derive_attr(rt, wfn, "keywords", fn.keywords)
        pargs = [derive_item(rt, wpargs, i, v) for i, v in enumerate(fn.args)]
        pkw = {k: derive_item(rt, wpkw, k, v) for k, v in fn.keywords.items()}
        return call_value(derive_attr(rt, wfn, "func", fn.func), [*pargs, *wargs], {**pkw, **wkwargs})
    if tp is staticmethod:
        return call_value(computed(fn.__func__), wargs, wkwargs)
    if isinstance(fn, type):
        return call_class(rt, wfn, wargs, wkwargs)
    if tp in (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
              types.MethodWrapperType, types.ClassMethodDescriptorType):
        result = native_call(fn, wargs, wkwargs)
        if tp is types.MethodWrapperType and fn.__name__ == "__get__" and wargs \
                and type(result.value) is types.MethodType and result.value.__self__ is wargs[0].value:
            result.bound_self = wargs[0]  # ``func.__get__(obj, cls)``: the method's receiver keeps its provenance
        return result
    call = lookup_type(tp, "__call__")
    if type(call) is types.FunctionType:
        return call_value(class_dependency(rt, wfn, tp, "__call__", call, shadowable=False), [wfn, *wargs], wkwargs)
    return native_call(fn, wargs, wkwargs)


def call_wrapped(fn, *args, **kwargs) -> WrappedValue:
    """Call ``fn`` through the interpreter (only valid while interpreting, e.g. in a wrapped_lookaside).

    Arguments (and ``fn``) may be WrappedValues or plain values (plain ones count as computed).
    """
    if current_runtime() is None:
        raise InterpreterError("call_wrapped() can only be used while the thunder interpreter is running")

    def wrap(v):
        return v if isinstance(v, WrappedValue) else computed(v)

    return call_value(wrap(fn), [wrap(a) for a in args], {k: wrap(v) for k, v in kwargs.items()})


# ----- classes ------------------------------------------------------------------------------------


def call_class(rt, wcls: WrappedValue, wargs, wkwargs) -> WrappedValue:
    cls = wcls.value
    meta = type(cls)
    meta_call = lookup_type(meta, "__call__")
    if type(meta_call) is types.FunctionType:
        return call_value(special_method(rt, meta, "__call__", meta_call), [wcls, *wargs], wkwargs)
    if meta_call is not type.__call__ or cls is type:
        return native_call(cls, wargs, wkwargs)
    new = lookup_type(cls, "__new__")
    new_fn = new.__func__ if isinstance(new, staticmethod) else new
    init = lookup_type(cls, "__init__")
    python_new = type(new_fn) is types.FunctionType
    python_init = type(init) is types.FunctionType
    if not python_new and not python_init:
        return native_call(cls, wargs, wkwargs)
    if python_new:
        special_method(rt, cls, "__new__", new)
        wobj = call_value(computed(new_fn), [wcls, *wargs], wkwargs)
    elif new_fn is object.__new__:
        # __init__ is overridden, so object.__new__ ignores the arguments (as in CPython).
        wobj = computed(object.__new__(cls))
    else:
        wobj = native_call(new_fn, [wcls, *wargs], wkwargs)
    obj = wobj.value
    if not isinstance(obj, cls):
        return wobj
    init = lookup_type(type(obj), "__init__")
    if type(init) is types.FunctionType:
        result = call_value(special_method(rt, type(obj), "__init__", init), [wobj, *wargs], wkwargs)
        if result.value is not None:
            raise TypeError(f"__init__() should return None, not '{type(result.value).__name__}'")
    else:
        native_call(init, [wobj, *wargs], wkwargs)
    return wobj


# ----- Python functions ---------------------------------------------------------------------------


def interpret_function(rt, fn, wargs, wkwargs) -> WrappedValue:
    from .generators import InterpretedGenerator
    from .loop import GENERATOR, execute

    code = fn.__code__
    if code.co_flags & CO_ASYNC_FLAGS:
        location = rt.frames[-1].source_location() if rt.frames else None
        raise unsupported(f"calling async function / coroutine {fn.__qualname__!r} (async def)", location,
                          "call it outside the jitted function or rewrite it as a regular function")
    toplevel = not rt.toplevel_done
    rt.toplevel_done = True
    frame = Frame(fn, code, fn.__globals__, fn.__builtins__)
    bind_arguments(rt, frame, fn, wargs, wkwargs, toplevel)
    if frame.info.cell_init:  # 3.10: the frame creates its cells itself (no MAKE_CELL)
        from .opcodes_310 import init_cells

        init_cells(rt, frame)
    kind, result = execute(rt, frame)
    if kind is GENERATOR:
        return computed(InterpretedGenerator(rt, frame))
    return result


def _name_list(names):
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def _missing(qualname, names, kind):
    n = len(names)
    return TypeError(f"{qualname}() missing {n} required {kind} argument{'' if n == 1 else 's'}: {_name_list(names)}")


def bind_arguments(rt, frame, fn, wargs, wkwargs, toplevel) -> None:
    """Fill the frame's locals from the call's arguments, with CPython's checks and messages."""
    code = fn.__code__
    qualname = fn.__qualname__  # CPython's messages name the function object (dataclass sets it), not its code
    argcount = code.co_argcount
    posonly = code.co_posonlyargcount
    kwonly = code.co_kwonlyargcount
    names = code.co_varnames
    total = argcount + kwonly
    slots = frame.locals
    ngiven = len(wargs)

    for i in range(min(ngiven, argcount)):
        slots[i] = wargs[i]
    index = total
    if code.co_flags & CO_VARARGS:
        extra = tuple(wargs[argcount:])
        slots[index] = computed(tuple(w.value for w in extra), items=extra)
        index += 1
    kwdict_w = None
    if code.co_flags & CO_VARKEYWORDS:
        kwdict_w = computed({}, items={})
        slots[index] = kwdict_w

    for key, w in wkwargs.items():
        if not isinstance(key, str):
            raise TypeError("keywords must be strings")  # CPython checks while unpacking **kwargs: no name
        try:
            j = names.index(key, posonly, total)
        except ValueError:
            j = -1
        if j < 0:
            if kwdict_w is not None:
                kwdict_w.value[key] = w.value
                kwdict_w.items[key] = w
                continue
            passed_posonly = [k for k in wkwargs if k in names[:posonly]]
            if passed_posonly:
                raise TypeError(
                    f"{qualname}() got some positional-only arguments passed as keyword arguments: "
                    f"'{', '.join(passed_posonly)}'"
                )
            raise TypeError(f"{qualname}() got an unexpected keyword argument '{key}'")
        if slots[j] is not None:
            raise TypeError(f"{qualname}() got multiple values for argument '{key}'")
        slots[j] = w

    defaults = fn.__defaults__ or ()
    if ngiven > argcount and not code.co_flags & CO_VARARGS:
        kwonly_given = sum(1 for i in range(argcount, total) if slots[i] is not None)
        if defaults:
            sig = f"from {argcount - len(defaults)} to {argcount}"
            plural = True
        else:
            sig = str(argcount)
            plural = argcount != 1
        kwonly_sig = ""
        if kwonly_given:
            kwonly_sig = (f" positional argument{'s' if ngiven != 1 else ''} (and {kwonly_given} "
                          f"keyword-only argument{'s' if kwonly_given != 1 else ''})")
        was = "was" if ngiven == 1 and not kwonly_given else "were"
        raise TypeError(
            f"{qualname}() takes {sig} positional argument{'s' if plural else ''} but {ngiven}{kwonly_sig} {was} given"
        )

    def default_value(name, value):
        if toplevel:
            return rt.input(value, Provenance.default(name, fn))
        return computed(value)

    if ngiven < argcount:
        first_default = argcount - len(defaults)
        missing = [names[i] for i in range(ngiven, first_default) if slots[i] is None]
        if missing:
            raise _missing(qualname, missing, "positional")
        for i in range(max(ngiven, first_default), argcount):
            if slots[i] is None:
                slots[i] = default_value(names[i], defaults[i - first_default])
    if kwonly:
        kwdefaults = fn.__kwdefaults__ or {}
        missing = []
        for i in range(argcount, total):
            if slots[i] is None:
                name = names[i]
                if name in kwdefaults:
                    slots[i] = default_value(name, kwdefaults[name])
                else:
                    missing.append(name)
        if missing:
            raise _missing(qualname, missing, "keyword-only")

    closure = fn.__closure__
    if closure:
        start = len(slots) - len(closure)
        for i, cell in enumerate(closure):
            slots[start + i] = computed(cell)
