"""Traces as Python source: the one printer used both to show traces and to compile them.

What is printed is what runs, so ``print(trace)`` is a program a user can copy, run and diff.
"""

from __future__ import annotations

import math

from thunder.core import dtypes
from thunder.core.devices import Device
from thunder.core.proxies import Proxy, type_string
from thunder.core.trace import TraceCtx

__all__ = ["prettyprint", "bsym_lines", "trace_source", "compile_trace", "ObjectRef", "Construct"]


class Construct:
    """``tp(**fields)`` in printed code (an epilogue building a model output again from its fields); with
    ``rebuild``, ``rebuild_object(tp, fields)``: a fresh instance given those attributes without calling
    ``__init__`` (an object of a plain class the program made and kept outside)."""

    __slots__ = ("tp", "fields", "rebuild")

    def __init__(self, tp, fields: dict, rebuild: bool = False):
        self.tp, self.fields, self.rebuild = tp, fields, rebuild


def rebuild_object(tp, attributes: dict):
    obj = tp.__new__(tp)
    vars(obj).update(attributes)
    return obj


class ObjectRef:
    """A Python object a trace refers to by name (a globals dict, a closure cell, a function); bound in
    the compiled function's globals and listed in the printed header."""

    __slots__ = ("obj", "name")

    def __init__(self, obj, name: str):
        self.obj, self.name = obj, name


class _Imports:
    """Import lines a printed trace needs, in first-use order."""

    def __init__(self):
        self.lines: dict[str, None] = {}
        self.ctx: dict[str, object] = {}

    def need(self, line: str) -> None:
        self.lines.setdefault(line, None)


def prettyprint(x, imports: _Imports | None = None) -> str:
    if isinstance(x, Proxy):
        return x.name
    if isinstance(x, TraceCtx):  # a sub-trace: printed as a nested def just before the call that takes it
        return x.fn_name
    if isinstance(x, ObjectRef):
        if imports is not None:
            imports.ctx[x.name] = x.obj
        return x.name
    if isinstance(x, Construct):
        type_name = prettyprint(ObjectRef(x.tp, f"{x.tp.__name__}_{id(x.tp):x}"), imports)
        if x.rebuild:
            rebuild = prettyprint(ObjectRef(rebuild_object, "rebuild_object"), imports)
            return f"{rebuild}({type_name}, {prettyprint(x.fields, imports)})"
        return f"{type_name}({', '.join(f'{k}={prettyprint(v, imports)}' for k, v in x.fields.items())})"
    t = type(x)
    if x is None or t is bool or t is int or t is str:
        return repr(x)
    if t is float:
        if math.isfinite(x):
            return repr(x)
        return f"float('{x}')"
    if t is complex:
        return f"complex({prettyprint(x.real)}, {prettyprint(x.imag)})"
    if t is tuple:
        inner = ", ".join(prettyprint(v, imports) for v in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if t is list:
        return "[" + ", ".join(prettyprint(v, imports) for v in x) + "]"
    if t is dict:
        return "{" + ", ".join(f"{prettyprint(k, imports)}: {prettyprint(v, imports)}" for k, v in x.items()) + "}"
    if (t is set or t is frozenset) and all(type(v) in (bool, int, float, str, type(None), tuple) for v in x):
        inner = ", ".join(sorted(prettyprint(v, imports) for v in x))
        return (f"{{{inner}}}" if x else "set()") if t is set else f"frozenset({{{inner}}})"
    if isinstance(x, tuple) and (hasattr(x, "_fields") or hasattr(t, "n_fields")):
        # namedtuples take fields as arguments; torch's structseqs (torch.return_types.max) take one tuple
        inner = ", ".join(prettyprint(v, imports) for v in x)
        type_name = prettyprint(ObjectRef(t, f"{t.__name__}_{id(t):x}"), imports)
        return f"{type_name}({inner})" if hasattr(x, "_fields") else f"{type_name}(({inner},))"
    fields = getattr(t, "__dataclass_fields__", None)
    if fields is not None and not isinstance(x, type):
        type_name = prettyprint(ObjectRef(t, f"{t.__name__}_{id(t):x}"), imports)
        inner = ", ".join(f"{n}={prettyprint(getattr(x, n), imports)}" for n, f in fields.items() if f.init)
        return f"{type_name}({inner})"
    constructor = getattr(t, "printed_constructor", None)
    if constructor is not None and isinstance(x, tuple):
        # a tuple standing for another type (a torch.Size with symbolic entries): ``(import, callable)``
        if imports is not None:
            imports.need(constructor[0])
        return f"{constructor[1]}([{', '.join(prettyprint(v, imports) for v in x)}])"
    if t is slice:
        return f"slice({prettyprint(x.start)}, {prettyprint(x.stop)}, {prettyprint(x.step)})"
    if x is Ellipsis:
        return "..."
    if isinstance(x, dtypes.dtype):
        if imports is not None:
            imports.need("from thunder.core import dtypes")
        return f"dtypes.{x.name}"
    if x in (bool, int, float, complex):
        return x.__name__
    if isinstance(x, Device):
        if imports is not None:
            imports.need("from thunder.core.devices import Device")
        return f"Device({x.type!r})" if x.index is None else f"Device({x.type!r}, {x.index})"
    module = type(x).__module__
    if module.startswith("torch"):
        import torch

        if isinstance(x, torch.dtype):
            if imports is not None:
                imports.need("import torch")
            return str(x)
        if isinstance(x, torch.Size):
            if imports is not None:
                imports.need("import torch")
            return f"torch.Size({list(x)!r})"
        if isinstance(x, torch.device):
            if imports is not None:
                imports.need("import torch")
            return f"torch.device({str(x)!r})"
    # Anything else is bound by name in the compiled function's globals.
    if imports is None:
        return repr(x)
    name = f"_{type(x).__name__}_{id(x):x}"
    imports.ctx[name] = x
    return name


def _output_string(out) -> str | None:
    if out is None:
        return None
    if isinstance(out, Proxy):
        return out.name
    if isinstance(out, (tuple, list)):
        inner = [_output_string(o) for o in out]
        if all(s is None for s in inner):
            return None  # only constants: nothing to bind
        # a constant among proxies (multi_head_attention_forward's ``(out, None)``) is unpacked into ``_``
        body = ", ".join("_" if s is None else s for s in inner)
        return f"({body},)" if len(inner) == 1 else f"({body})"
    return None


def _call_string(bsym, imports: _Imports) -> str:
    sym = bsym.sym
    if sym.call_ctx is not None:
        imports.ctx.update(sym.call_ctx)
    elif sym.module is not None:
        imports.need(f"import {sym.module} as {sym.alias}" if sym.alias else f"import {sym.module}")
    args = [prettyprint(a, imports) for a in bsym.args]
    args += [f"{k}={prettyprint(v, imports)}" for k, v in bsym.kwargs.items()]
    return f"{sym.printed_name}({', '.join(args)})"


def _meta_comment(out) -> str:
    from thunder.core.pytree import tree_flatten

    proxies = [o for o in tree_flatten(out)[0] if isinstance(o, Proxy)]
    if not proxies:
        return ""
    return "  # " + ", ".join(f'{p.name}: "{type_string(p)}"' for p in proxies)


def bsym_lines(bsym, printed_sources: set, *, with_subsymbols: bool, imports: _Imports | None = None,
               indent: str = "  ") -> list[str]:
    imports = imports if imports is not None else _Imports()
    lines = []
    for sub in bsym.subtraces:
        lines += [indent + line for line in subtrace_lines(sub, with_subsymbols=with_subsymbols, imports=imports)]
    if bsym.sym.python_printer is not None:
        return lines + [indent + line for line in bsym.sym.python_printer(bsym, imports)]
    call = _call_string(bsym, imports)
    out = _output_string(bsym.output)
    lines.append(f"{indent}{out + ' = ' if out else ''}{call}{_meta_comment(bsym.output)}")
    if with_subsymbols:
        for sub in bsym.subsymbols:
            lines += [indent + "  # " + line.strip() for line in bsym_lines(sub, printed_sources, with_subsymbols=True,
                                                                           imports=_Imports(), indent="")]
    return lines


def _source_comment(loc) -> str:
    return f"  # {loc.filename}:{loc.lineno}: \t{loc.line}" if loc.line else f"  # {loc.filename}:{loc.lineno}"


def subtrace_lines(trace, *, with_subsymbols: bool, imports: _Imports) -> list[str]:
    """A sub-trace as a nested function: ``def true_branch(x, w):`` and its body, one level deeper."""
    body, _ = _body_and_imports(trace, with_subsymbols=with_subsymbols, imports=imports)
    params = ", ".join(p.name if isinstance(p, Proxy) else str(p) for p in trace.args)
    return [f"def {trace.fn_name}({params}):", *body]


def _body_and_imports(trace, *, with_subsymbols: bool, imports: _Imports | None = None) -> tuple[list[str], _Imports]:
    imports = _Imports() if imports is None else imports
    if trace.decorators:
        imports.need("import torch")  # decorators are torch's (``@torch.autocast("cpu", enabled=False)``)
    lines: list[str] = []
    for p in trace.args:
        if isinstance(p, Proxy):
            lines.append(f'  # {p.name}: "{type_string(p)}"')
    last_loc = None
    printed: set = set()
    for bsym in trace.bound_symbols:
        loc = bsym.source
        if loc is not None and loc != last_loc:
            lines.append(_source_comment(loc))
            last_loc = loc
        lines += bsym_lines(bsym, printed, with_subsymbols=with_subsymbols, imports=imports)
    lines.append(f"  return {prettyprint(trace.output, imports)}")
    return lines, imports


def trace_source(trace, *, with_subsymbols: bool = True) -> str:
    body, imports = _body_and_imports(trace, with_subsymbols=with_subsymbols)
    head = [str(trace.provenance)] if trace.provenance is not None else []
    head += list(imports.lines)
    if imports.ctx:
        head.append("# not importable, bound when compiled: " + ", ".join(sorted(imports.ctx)))
    params = ", ".join(p.name if isinstance(p, Proxy) else str(p) for p in trace.args)
    head += ["", *trace.decorators, f"def {trace.fn_name}({params}):"]
    return "\n".join(head + body)


def compile_trace(trace, *, first_args_in_list: int | None = None):
    """Compiles the trace's printed source (without subsymbol comments, which are only for reading).

    ``first_args_in_list=k``: the function takes its first ``k`` arguments in one list, which it empties once it has
    unpacked them. Values passed as arguments stay alive (the caller's argument tuple holds them) until the call
    returns; values passed this way are freed at their ``del`` (a backward frees each saved activation once used)."""
    body, imports = _body_and_imports(trace, with_subsymbols=False)
    names = [p.name if isinstance(p, Proxy) else str(p) for p in trace.args]
    if first_args_in_list is not None:
        packed = "packed_args"
        while packed in trace.names or packed in names:
            packed += "_"
        unpack = [f"  ({', '.join(names[:first_args_in_list])},) = {packed}"] if first_args_in_list else []
        body = [*unpack, f"  {packed}.clear()", *body]
        names = [packed, *names[first_args_in_list:]]
    params = ", ".join(names)
    source = "\n".join([*imports.lines, "", *trace.decorators, f"def {trace.fn_name}({params}):", *body])
    namespace: dict = dict(imports.ctx)
    filename = f"thunder.{trace.fn_name}_{id(trace):x}{'' if first_args_in_list is None else '_packed'}"
    import linecache

    # Registering the source lets tracebacks and debuggers show the generated lines.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace[trace.fn_name]
    fn.__thunder_source__ = source
    return fn
