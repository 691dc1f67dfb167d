"""A region's prims as an nvFuser ``FusionDefinition``: one translation per prim, keyed by prim name.

Translations write to a *builder* with five calls (``tensor``, ``scalar``, ``constant``, ``op``, ``output``).
:class:`NvFuserBuilder` builds a real ``nvfuser_direct.FusionDefinition``; :class:`TextBuilder` writes the same
program as nvFuser's Python text, which is how a definition is shown before it runs, or where nvFuser is missing.

Inputs are described by :class:`TensorDescriptor`: dtype, which dims are 1 (broadcast), contiguity and stride order.
Sizes other than 1 are symbolic (``-1``), so one definition serves every size with the same descriptor; numbers the
region reads (``cache="symbolic values"``: sizes given to reshapes, a learning rate) are scalar inputs of the
fusion, and Python numbers in the trace are constants.
"""

from __future__ import annotations

from dataclasses import dataclass

from thunder.core import dtypes
from thunder.core.proxies import BoolProxy, FloatProxy, IntegerProxy, NumberProxy, Proxy, TensorProxy

__all__ = ["DTYPES", "TRANSLATIONS", "REDUCTIONS", "TensorDescriptor", "describe", "NvFuserBuilder", "TextBuilder",
           "translate_region", "ResultSpec"]

# thunder dtype -> nvFuser DataType name
DTYPES = {
    dtypes.float32: "Float", dtypes.float64: "Double", dtypes.float16: "Half", dtypes.bfloat16: "BFloat16",
    dtypes.int64: "Int", dtypes.int32: "Int32", dtypes.bool8: "Bool",
}
_NUMBER_TYPES = {bool: "Bool", int: "Int", float: "Double"}  # Python number type -> nvFuser scalar DataType name
_PROXY_TYPES = {BoolProxy: "Bool", IntegerProxy: "Int", FloatProxy: "Double"}


# ---------------------------------------------------------------------------------------------
# Input descriptors
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorDescriptor:
    """What a definition assumes of an input tensor, in nvFuser's terms: ``shape`` has 1 for size-1 dims and -1 for
    the others; ``contiguity`` is given per dim *in memory order* (outermost first): None for a broadcast dim (size
    1, or stride 0: an expanded dim), else whether the dim is dense with the next inner non-broadcast one;
    ``stride_order`` is each logical dim's rank in memory (0 innermost), empty when row-major."""

    dtype: object
    shape: tuple
    contiguity: tuple
    stride_order: tuple


def describe(sizes, strides, dtype) -> TensorDescriptor:
    """The descriptor nvFuser derives from a tensor's sizes and strides: dims ordered by decreasing stride (ties keep
    their logical order), with stride-0 dims kept at their logical position."""
    n = len(sizes)
    order = sorted((d for d in range(n) if strides[d] != 0), key=lambda d: -strides[d])  # outermost first
    for d in range(n):
        if strides[d] == 0:
            order.insert(d, d)

    def broadcast(d) -> bool:
        return strides[d] == 0 or sizes[d] == 1

    contiguity = []
    for k, d in enumerate(order):
        if broadcast(d):
            contiguity.append(None)
            continue
        inner = next((e for e in order[k + 1:] if not broadcast(e)), None)
        contiguity.append(strides[d] == (1 if inner is None else strides[inner] * sizes[inner]))
    stride_order = [0] * n
    for k, d in enumerate(order):
        stride_order[d] = n - 1 - k
    row_major = stride_order == list(range(n - 1, -1, -1))
    return TensorDescriptor(dtype, tuple(1 if s == 1 else -1 for s in sizes), tuple(contiguity),
                            () if row_major else tuple(stride_order))


# ---------------------------------------------------------------------------------------------
# Builders
# ---------------------------------------------------------------------------------------------


class NvFuserBuilder:
    """Builds an ``nvfuser_direct.FusionDefinition`` (call inside ``with fd:``)."""

    def __init__(self, nvfuser_direct, fd):
        self.nv, self.fd = nvfuser_direct, fd

    def dtype(self, name: str):
        return getattr(self.nv.DataType, name)

    def tensor(self, d: TensorDescriptor):
        return self.fd.define_tensor(shape=list(d.shape), contiguity=list(d.contiguity),
                                     dtype=self.dtype(DTYPES[d.dtype]), is_cpu=False,
                                     stride_order=list(d.stride_order))

    def scalar(self, type_name: str):
        return self.fd.define_scalar(None, dtype=self.dtype(type_name))

    def constant(self, value):
        return self.fd.define_scalar(value, dtype=self.dtype(_NUMBER_TYPES[type(value)]))

    def op(self, name: str, *args, **kwargs):
        return getattr(self.fd.ops, name)(*args, **kwargs)

    def output(self, value, alias_input=None):
        if alias_input is None:
            self.fd.add_output(value)
        else:
            self.fd.add_output(value, alias_input=alias_input)


class _Name(str):
    """A value of a TextBuilder program: prints as its name."""


class _DType(str):
    pass


class TextBuilder:
    """Writes the program nvFuser's Python frontend would print for the definition."""

    def __init__(self):
        self.lines: list[str] = []
        self._counts = {"T": 0, "S": 0}

    def _new(self, kind: str) -> _Name:
        name = _Name(f"{kind}{self._counts[kind]}")
        self._counts[kind] += 1
        return name

    def dtype(self, name: str) -> _DType:
        return _DType(f"DataType.{name}")

    def tensor(self, d: TensorDescriptor):
        t = self._new("T")
        order = f", stride_order={list(d.stride_order)}" if d.stride_order else ""
        self.lines.append(f"{t} = fd.define_tensor(shape={list(d.shape)}, contiguity={list(d.contiguity)}, "
                          f"dtype={self.dtype(DTYPES[d.dtype])}, is_cpu=False{order})")
        return t

    def scalar(self, type_name: str):
        s = self._new("S")
        self.lines.append(f"{s} = fd.define_scalar(None, dtype={self.dtype(type_name)})")
        return s

    def constant(self, value):
        s = self._new("S")
        self.lines.append(f"{s} = fd.define_scalar({_literal(value)}, dtype={self.dtype(_NUMBER_TYPES[type(value)])})")
        return s

    def op(self, name: str, *args, **kwargs):
        out = self._new("T")
        rendered = [_render(a) for a in args] + [f"{k}={_render(v)}" for k, v in kwargs.items()]
        self.lines.append(f"{out} = fd.ops.{name}({', '.join(rendered)})")
        return out

    def output(self, value, alias_input=None):
        alias = "" if alias_input is None else f", alias_input={alias_input}"
        self.lines.append(f"fd.add_output({value}{alias})")

    def text(self, name: str = "nvfuser_fusion") -> str:
        body = "\n".join(f"    {line}" for line in self.lines)
        return f"def {name}(fd: FusionDefinition) -> None:\n{body}\n"


def _literal(value) -> str:
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f'float("{value}")'
    return repr(value)


def _render(x) -> str:
    if isinstance(x, (_Name, _DType)):
        return str(x)
    if isinstance(x, (list, tuple)):
        return "[" + ", ".join(_render(e) for e in x) + "]"
    return _literal(x)


# ---------------------------------------------------------------------------------------------
# Translations: prim name -> fn(b, v, bsym) returning the nvFuser value of the prim's output. ``v(x)`` is the
# nvFuser value of an argument (a tensor, a number input, or a constant), ``b`` the builder.
# ---------------------------------------------------------------------------------------------

_UNARY = {
    "abs": "abs", "neg": "neg", "exp": "exp", "exp2": "exp2", "expm1": "expm1", "log": "log", "log1p": "log1p",
    "log2": "log2", "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh",
    "atanh": "atanh", "sqrt": "sqrt", "rsqrt": "rsqrt", "erf": "erf", "erfc": "erfc", "erfinv": "erfinv",
    "lgamma": "lgamma", "floor": "floor", "ceil": "ceil", "round": "round", "trunc": "trunc", "sign": "sign",
    "signbit": "signbit", "reciprocal": "reciprocal", "logical_not": "logical_not", "bitwise_not": "bitwise_not",
    "isfinite": "isfinite", "isnan": "isnan", "isinf": "isinf",
}
_BINARY = {
    "add": "add", "sub": "sub", "mul": "mul", "div": "div", "fmod": "fmod", "remainder": "remainder", "pow": "pow",
    "maximum": "maximum", "minimum": "minimum", "atan2": "atan2", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le",
    "gt": "gt", "ge": "ge", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "shift_left": "bitwise_left_shift", "shift_right": "bitwise_right_shift",
}
# reductions nvFuser computes in float32 for half-precision inputs (then casts back, as eager's kernels do)
REDUCTIONS = {"sum": "sum", "prod": "prod", "amax": "max", "amin": "min", "var": "var"}


def _out(bsym) -> TensorProxy:
    return bsym.flat_proxy_outs[0]


def _cast_to(b, value, dtype):
    return b.op("cast", value, dtype=b.dtype(DTYPES[dtype]))


def _elementwise(op: str):
    def translation(b, v, bsym):
        result = b.op(op, *(v(a) for a in bsym.args))
        # a Python number operand takes part in nvFuser's type promotion: pin the dtype thunder's meta computed
        if any(not isinstance(a, TensorProxy) for a in bsym.args):
            result = _cast_to(b, result, _out(bsym).dtype)
        return result

    return translation


def _reduction(op: str):
    def translation(b, v, bsym):
        a, dims = bsym.args[0], [int(d) for d in bsym.args[1]]
        x, compute = v(a), a.dtype
        if dtypes.is_low_precision(a.dtype):
            x, compute = _cast_to(b, x, dtypes.float32), dtypes.float32
        if op == "var":
            result = b.op("var", x, dims, correction=_number(bsym.kwargs.get("correction", 1)), keepdim=False)
        else:
            result = b.op(op, x, dims, keepdim=False)
        out = _out(bsym)
        # nvFuser sums integers as Int (int64): every result not already in the output's float dtype is cast
        return result if out.dtype is compute and dtypes.is_float_dtype(compute) else _cast_to(b, result, out.dtype)

    return translation


def _number(x):
    return int(x) if isinstance(x, (int, IntegerProxy)) and not isinstance(x, bool) else x


def _sizes(v, shape) -> list:
    """A shape for nvFuser: ints stay ints, symbolic sizes are the fusion's scalar inputs."""
    return [v(s) if isinstance(s, NumberProxy) else int(s) for s in shape]


TRANSLATIONS = {
    **{name: _elementwise(op) for name, op in _UNARY.items()},
    **{name: _elementwise(op) for name, op in _BINARY.items()},
    "where": _elementwise("where"),
    **{name: _reduction(op) for name, op in REDUCTIONS.items()},
    "convert_element_type": lambda b, v, bsym: _cast_to(b, v(bsym.args[0]), bsym.args[1]),
    "broadcast_in_dim": lambda b, v, bsym: b.op("broadcast_in_dim", v(bsym.args[0]), _sizes(v, bsym.args[1]),
                                                [int(d) for d in bsym.args[2]]),
    "reshape": lambda b, v, bsym: b.op("reshape", v(bsym.args[0]), _sizes(v, bsym.args[1])),
    "transpose": lambda b, v, bsym: b.op("permute", v(bsym.args[0]), [int(d) for d in bsym.args[1]]),
    "squeeze": lambda b, v, bsym: b.op("squeeze", v(bsym.args[0]), [int(d) for d in bsym.args[1]]),
    "slice": lambda b, v, bsym: b.op("slice", v(bsym.args[0]), start_indices=_sizes(v, bsym.args[1]),
                                     end_indices=_sizes(v, bsym.args[2])),
    "cat": lambda b, v, bsym: b.op("cat", [v(t) for t in bsym.args[0]], int(bsym.args[1])),
    "full": lambda b, v, bsym: b.op("full", _sizes(v, bsym.args[0]), v(bsym.args[1]),
                                    dtype=b.dtype(DTYPES[_out(bsym).dtype])),
    "iota": lambda b, v, bsym: b.op("iota", v(bsym.args[0]), v(bsym.kwargs["start"]), v(bsym.kwargs["step"]),
                                    dtype=b.dtype(DTYPES[_out(bsym).dtype])),
}


# ---------------------------------------------------------------------------------------------
# A region
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResultSpec:
    """How the fusion's results become the region's outputs: per output, ``("new", k)`` (the fusion's k-th result)
    or ``("input", i)`` (the i-th tensor input, which an aliased output wrote in place)."""

    results: tuple


def result_spec(prims_, tensor_inputs, outputs) -> ResultSpec:
    position = {p.name: i for i, p in enumerate(tensor_inputs)}
    copied_into = {_out(b).name: b.kwargs["out"].name for b in prims_ if b.sym.name == "copy_to_out_"}
    results, new = [], 0
    for o in outputs:
        if o.name in copied_into:
            results.append(("input", position[copied_into[o.name]]))
        else:
            results.append(("new", new))
            new += 1
    return ResultSpec(tuple(results))


def _number_type(p: NumberProxy) -> str:
    return _PROXY_TYPES[type(p)]


def translate_region(b, prims_, tensor_inputs, number_inputs, outputs, descriptors) -> None:
    """Writes the region to builder ``b``: inputs (tensors by ``descriptors``, then numbers), each prim by its
    translation, the outputs (new ones in order), and ``copy_to_out_`` as an output aliased to its destination."""
    env: dict = {}
    for p, d in zip(tensor_inputs, descriptors):
        env[p.name] = b.tensor(d)
    for n in number_inputs:
        env[n.name] = b.scalar(_number_type(n))

    def v(x):
        if isinstance(x, Proxy):
            return env[x.name]
        return b.constant(x)

    aliased: dict = {}  # destination input -> the value written into it (of several copies into one, the last)
    for bsym in prims_:
        name = bsym.sym.name
        if name == "copy_to_out_":
            computed, out = bsym.args[0], bsym.kwargs["out"]
            aliased[out.name] = env[computed.name]
            env[_out(bsym).name] = env[computed.name]  # ``out`` after the copy holds the computed value
            continue
        env[_out(bsym).name] = TRANSLATIONS[name](b, v, bsym)
    copies = {_out(bsym).name for bsym in prims_ if bsym.sym.name == "copy_to_out_"}
    for o in outputs:
        if o.name not in copies:
            b.output(env[o.name])
    for destination, value in aliased.items():
        b.output(value, alias_input=env[destination])
