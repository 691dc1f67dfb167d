"""Why a cache entry's prologue rejected a call: which check failed, on which value, what it expected and got.

A prologue is straight-line code that returns None at the first failed check. To tell which one, the same
printed checks are compiled once more (per prologue, on the first miss that needs it) with each ``return None``
returning the position of its check and the values reached so far. The rejection is then described from the
check's bound symbol (what it compared against) and the value reached (what the call gave), and the value is
named by the path the prologue took to reach it (``args[0]``, ``fn.__globals__['K']``, ``self.fc1.weight``).
Only a miss pays for this: the cache-hit path is unchanged.
"""

from __future__ import annotations

import re
import weakref

from thunder.core.codegen import ObjectRef, _Imports, bsym_lines
from thunder.core.proxies import Proxy

__all__ = ["Rejection", "explain_rejection"]


class Rejection:
    """One entry's answer to one call: the failed check (``check``, the prim's name, and ``code``, its printed
    line), the value it checked (``path``), and what the entry was compiled for (``expected``) vs what the call
    gave (``got``)."""

    __slots__ = ("check", "code", "path", "expected", "got")

    def __init__(self, check: str, code: str, path: str, expected: str, got: str):
        self.check, self.code, self.path, self.expected, self.got = check, code, path, expected, got

    def __str__(self) -> str:
        return f"{self.path}: expected {self.expected}, got {self.got}"

    __repr__ = __str__


# ``m.__dict__['_parameters']['weight']`` is ``m.weight``, ``seq._modules['0']`` is ``seq[0]``, ``o.__dict__['x']``
# is ``o.x``
_MODULE_MEMBER = re.compile(r"(?:\.__dict__\['_(?:parameters|buffers|modules)'\]|\._(?:parameters|buffers|modules))\['([^']+)'\]")
_INSTANCE_ATTRIBUTE = re.compile(r"\.__dict__\['(\w+)'\]")


def _member(m: re.Match) -> str:
    key = m.group(1)
    return f".{key}" if key.isidentifier() else f"[{key}]"
_REJECTED = re.compile(r": return None$")
_diagnostics: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # prologue trace -> its diagnostic function


def _diagnostic(prologue):
    """The prologue's checks, each returning ``(its index, the locals)`` where the prologue returns None; a check
    that raises (an attribute that went away) returns the same with the exception."""
    fn = _diagnostics.get(prologue)
    if fn is not None:
        return fn
    imports = _Imports()
    body = []
    for k, bsym in enumerate(prologue.bound_symbols):
        body.append(f"    _at = {k}")
        for line in bsym_lines(bsym, set(), with_subsymbols=False, imports=imports, indent="    "):
            body.append(_REJECTED.sub(f": return ({k}, locals(), None)", line))
    source = "\n".join([
        *imports.lines, "", "def diagnose(*args, **kwargs):", "  _at = -1", "  try:", *body,
        "  except Exception as _e:", "    return (_at, locals(), _e)", "  return None"])
    namespace = dict(imports.ctx)
    exec(compile(source, f"thunder.diagnostic_{id(prologue):x}", "exec"), namespace)
    fn = _diagnostics[prologue] = namespace["diagnose"]
    return fn


def explain_rejection(prologue, fn, args: tuple, kwargs: dict) -> Rejection | None:
    """Why the prologue trace ``prologue`` (the one that runs) rejects ``fn(*args, **kwargs)``; None if it accepts."""
    found = _diagnostic(prologue)(*args, **kwargs)
    if found is None:
        return None
    k, values, error = found
    bsym = prologue.bound_symbols[k]
    code = " ".join(bsym_lines(bsym, set(), with_subsymbols=False, indent=""))
    paths = _Paths(prologue, fn, values)
    if error is not None:
        return Rejection(bsym.sym.name, code, paths.of(bsym.output) if bsym.output is not None else code,
                         "it to be reachable", f"{type(error).__name__}: {error}")
    describe = DESCRIBE.get(bsym.sym.name, _describe_other)
    path, expected, got = describe(bsym, paths)
    return Rejection(bsym.sym.name, code, path, expected, got)


class _Paths:
    """Names values by how the prologue reached them, and gives their values in this call."""

    def __init__(self, prologue, fn, values: dict):
        self.fn, self.values = fn, values
        self.made_by: dict = {}
        self.formulas: dict = {}  # name -> the formula of a number computed from others, each written once
        for b in prologue.bound_symbols:
            outputs = b.output if isinstance(b.output, tuple) else (b.output,)
            for i, o in enumerate(outputs):
                if isinstance(o, Proxy):
                    self.made_by[o.name] = (b, i)

    def value(self, x):
        if isinstance(x, Proxy):
            return self.values.get(x.name)
        if isinstance(x, ObjectRef):
            return x.obj
        return x

    def of(self, x) -> str:
        """``x``'s path, with module and object attributes as written in Python (``self.fc1.weight``)."""
        path = self._path(x)
        path = _MODULE_MEMBER.sub(_member, path)
        return _INSTANCE_ATTRIBUTE.sub(r".\1", path)

    def _path(self, x) -> str:
        if isinstance(x, ObjectRef):
            return _root_name(x.obj, self.fn)
        if not isinstance(x, Proxy):
            return repr(x)
        if x.name == "args":
            return "args"
        if x.name == "kwargs":
            return "kwargs"
        made = self.made_by.get(x.name)
        if made is None:
            return x.name
        b, i = made
        name = b.sym.name
        if name == "unpack_item":
            obj, key = b.args
            if isinstance(obj, Proxy) and obj.name == "args" and isinstance(key, int):
                return _parameter(self.fn, key)
            if isinstance(obj, Proxy) and obj.name == "kwargs":
                return str(key)
            if isinstance(obj, ObjectRef) and isinstance(obj.obj, dict) and "__name__" in obj.obj and isinstance(key, str):
                return f"{obj.obj['__name__']}.{key}"  # a global of that module
            return f"{self._path(obj)}[{_key(key)}]"
        if name == "unpack_attr":
            obj, attr = b.args
            if attr == "__self__" and isinstance(obj, ObjectRef) and obj.obj is self.fn:
                return "self"  # the object of a jitted bound method (thunder.jit(optimizer.step))
            return f"{self._path(obj)}.{attr}"
        if name == "unpack_dims":
            return f"{self._path(b.args[0])}.shape[{i}]"
        if name == "unpack_cell" and isinstance(b.args[0], ObjectRef):
            return b.args[0].name.removeprefix('cell_')  # the closure variable's name
        if name == "unpack_cell":
            return f"{self._path(b.args[0])}.cell_contents"
        if name == "unpack_type":
            return f"type({self._path(b.args[0])})"
        if name == "unpack_keys":
            return f"tuple({self._path(b.args[0])})"
        if name == "unpack_lookup":
            return f"{self._path(b.args[0])}.{b.args[1]}"
        # a number computed from others (a constraint under symbolic values): its formula
        formula = self.formulas.get(x.name)
        if formula is None:
            formula = self.formulas[x.name] = self._formula(x, b)
        return formula

    def _formula(self, x, b) -> str:
        """The formula of the number ``x`` that ``b`` computes; where it would be longer than a line (a chain of
        numbers each reusing the one before: ``n = n + n`` repeated doubles it every step), ``x``'s name in the
        trace instead."""
        from thunder.executors.pythonex import _OPERATORS  # the number prims printed as infix operators

        name = b.sym.name
        operator = _OPERATORS.get(name)
        operands = [self._path(a) for a in b.args]
        if operator is not None and len(operands) == 2:
            formula = f"({operands[0]} {operator} {operands[1]})"
        else:
            formula = f"{name}({', '.join(operands)})"
        return formula if len(formula) <= _LONGEST_FORMULA else f"{x.name} (a number the program computed)"


_LONGEST_FORMULA = 200


def _root_name(obj, fn) -> str:
    """An object the prologue refers to by name: the jitted function or module, a globals dict, a cell."""
    if obj is fn:
        return "self" if not hasattr(fn, "__code__") else getattr(fn, "__qualname__", "fn")
    if isinstance(obj, dict) and "__name__" in obj:
        return f"vars({obj['__name__']})"
    return _short(obj)


def _parameter(fn, index: int) -> str:
    from thunder.frontend.prologue import _parameter_name

    name = _parameter_name(fn, index)
    return f"args[{index}]" if name == f"arg{index}" else name


def _key(key) -> str:
    """A dict key as written in a path: literals as they are, a tensor key (optimizer state) by its kind."""
    if type(key) in (str, int, float, bool, bytes, type(None)):
        return repr(key)
    shape = getattr(key, "shape", None)
    return f"<{type(key).__name__} of shape {tuple(shape)}>" if shape is not None else f"<{type(key).__name__}>"


def _short(x, limit: int = 80) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _type_name(x) -> str:
    return type(x).__qualname__


# what each check compared: bound symbol, paths -> (path of the value, expected, got) ---------------------------
def _describe_tensor(bsym, paths):
    return _describe_tensor_check(bsym.args[:-1], paths)


def _describe_tensors(bsym, paths):
    """The first of the grouped tensors whose own check fails."""
    _, checks = bsym.args
    for check in checks:
        path, expected, got = _describe_tensor_check(check, paths)
        if expected:
            return path, expected, got
    return _describe_other(bsym, paths)


def _describe_tensor_check(check, paths):
    t, shape, device, dtype, requires_grad, _ = check
    v = paths.value(t)
    path = paths.of(t)
    import torch

    if not isinstance(v, torch.Tensor):
        return path, "a tensor", f"{_type_name(v)} {_short(v)}"
    expected, got = [], []
    expected_shape = tuple(d if isinstance(d, int) else None for d in shape)
    if len(expected_shape) != v.ndim or any(e is not None and e != g for e, g in zip(expected_shape, v.shape)):
        expected.append("shape " + str(tuple("any" if d is None else d for d in expected_shape)))
        got.append(f"shape {tuple(v.shape)}")
    for what, e, g in (("dtype", dtype, v.dtype), ("device", paths.value(device), v.device),
                       ("requires_grad", requires_grad, v.requires_grad)):
        if e != g:
            expected.append(f"{what} {e}")
            got.append(f"{what} {g}")
    return path, ", ".join(expected), ", ".join(got)


def _describe_strides(bsym, paths):
    t, strides = bsym.args
    v = paths.value(t)
    if strides == "contiguous":
        return paths.of(t), "a contiguous tensor", f"strides {v.stride()} (not contiguous)"
    return paths.of(t), f"strides {tuple(strides)}", f"strides {v.stride()}"


def _describe_tensor_method(bsym, paths):
    t, name, value = bsym.args
    return paths.of(t), f"{name}() {value!r}", f"{name}() {getattr(paths.value(t), name)()!r}"


def _describe_literal(bsym, paths):
    x, value = bsym.args
    v = paths.value(x)
    if type(v) is not type(value) and value is not None and not isinstance(value, bool):
        return paths.of(x), f"{_short(value)} ({_type_name(value)})", f"{_short(v)} ({_type_name(v)})"
    return paths.of(x), _short(value), _short(v)


def _describe_is(bsym, paths):
    x, obj = bsym.args
    return paths.of(x), f"the very object {_short(paths.value(obj))}", f"another object, {_short(paths.value(x))}"


def _describe_type(bsym, paths):
    x, tp = bsym.args
    return paths.of(x), f"type {paths.value(tp).__qualname__}", f"type {_type_name(paths.value(x))}"


def _describe_len(bsym, paths):
    x, n = bsym.args
    return paths.of(x), f"length {n}", f"length {len(paths.value(x))}"


def _describe_contains(bsym, paths):
    container, key, present = bsym.args
    where = f"{paths.of(container)}[{_short(paths.value(key))}]"
    return where, "present" if present else "absent", "absent" if present else "present"


def _describe_hasattr(bsym, paths):
    obj, name, present = bsym.args
    return f"{paths.of(obj)}.{name}", "present" if present else "absent", "absent" if present else "present"


def _describe_arg_count(bsym, paths):
    args, kwargs, n, kwnames = bsym.args
    got_args, got_kwargs = paths.value(args), paths.value(kwargs)
    return ("the arguments", f"{n} positional, keywords {sorted(kwnames)}",
            f"{len(got_args)} positional, keywords {sorted(got_kwargs)}")


def _describe_grad_mode(bsym, paths):
    import torch

    return "torch.is_grad_enabled()", str(bsym.args[0]), str(torch.is_grad_enabled())


def _describe_autocast(bsym, paths):
    import torch

    (states,) = bsym.args
    now = tuple((d, torch.get_autocast_dtype(d) if torch.is_autocast_enabled(d) else None) for d, _ in states)
    return "the autocast state (device, dtype or None)", str(states), str(now)


def _describe_state(bsym, paths):
    query, answer = bsym.args
    q = paths.value(query)
    return f"{getattr(q, '__module__', '')}.{q.__name__}()".lstrip("."), _short(answer), _short(q())


def _describe_no_hooks(bsym, paths):
    return "the hooks of the traced modules", "no hooks", "a hook registered on a traced module (or globally)"


def _describe_distinct_storage(bsym, paths):
    names = ", ".join(paths.of(t) for t in bsym.args)
    return names, "distinct tensors (the program updates inputs in place)", "tensors sharing memory"


def _describe_other(bsym, paths):
    code = " ".join(bsym_lines(bsym, set(), with_subsymbols=False, indent=""))
    return code, "the check to pass", "it failed"


DESCRIBE = {
    "check_tensor": _describe_tensor, "check_tensors": _describe_tensors, "check_strides": _describe_strides,
    "check_tensor_method": _describe_tensor_method,
    "check_literal": _describe_literal,
    "check_is": _describe_is, "check_type": _describe_type, "check_len": _describe_len,
    "check_contains": _describe_contains, "check_hasattr": _describe_hasattr, "check_arg_count": _describe_arg_count,
    "check_grad_mode": _describe_grad_mode, "check_autocast": _describe_autocast, "check_state": _describe_state,
    "check_no_hooks": _describe_no_hooks, "check_distinct_storage": _describe_distinct_storage,
}
