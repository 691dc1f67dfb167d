"""Elementwise operations: broadcasting, type promotion, then the prim."""

from __future__ import annotations

import torch

from thunder.core import dtypes, prims
from thunder.core.errors import check
from thunder.core.proxies import BoolProxy, NumberProxy, TensorProxy, pyval
from thunder.core.shapes import broadcast_shapes
from thunder.torch.promotion import Promotion, result_dtypes
from thunder.torch.registry import language_symbols, register_method, torchsymbol

P = Promotion


def expand_to(a, shape):
    """``a`` broadcast to ``shape`` (numpy rules); numbers and same-shape tensors are returned as is.

    ``shape`` is a broadcast that already included ``a`` (broadcast_shapes, or update's check), whose recorded
    constraints decide for each dimension whether it equals the result's; comparing the sizes' values here
    therefore records nothing (comparing the proxies would record a constraint between unrelated sizes, and
    adding the broadcast when unsure would put a size-specialized expand into fusions)."""
    if not isinstance(a, TensorProxy) or (
            len(a.shape) == len(shape)
            and all(getattr(x, "value", x) == getattr(y, "value", y) for x, y in zip(a.shape, shape))):
        return a
    offset = len(shape) - a.ndim
    check(offset >= 0, lambda: f"cannot broadcast a tensor of shape {a.shape} to {shape}")
    return prims.broadcast_in_dim(a, tuple(shape), tuple(range(offset, len(shape))))


def convert(a, dtype):
    """``a`` converted to ``dtype`` when it is a tensor of another dtype."""
    if isinstance(a, TensorProxy) and a.dtype is not dtype:
        return prims.convert_element_type(a, dtype)
    return a


def elementwise(prim, *args, promotion: Promotion = P.DEFAULT):
    """Broadcasts tensors, computes in the promoted dtype, and converts to the result dtype."""
    for a in args:
        check(isinstance(a, (TensorProxy, NumberProxy, bool, int, float, complex)),
              lambda: f"{prim.name}(): expected Tensor or number arguments, but got {type(a).__name__}", TypeError)
    tensors = [a for a in args if isinstance(a, TensorProxy)]
    if not tensors:
        return prim(*args)
    computation_dtype, result_dtype = result_dtypes(*args, promotion=promotion)
    shape = broadcast_shapes(*[t.shape for t in tensors])
    devices = {t.device for t in tensors if t.ndim > 0} or {tensors[0].device}
    check(len(devices) == 1, lambda: f"Expected all tensors to be on the same device, but found at least two devices, "
          f"{' and '.join(map(str, devices))}!")
    prepared = [convert(expand_to(a, shape), computation_dtype) if isinstance(a, TensorProxy) else a for a in args]
    out = prim(*prepared)
    return convert(out, result_dtype)


def _unary(name, promotion, *torch_fns, method=True):
    prim = prims.all_prims[name]

    def impl(a):
        return elementwise(prim, a, promotion=promotion)

    impl.__name__ = name
    methods = (name,) if method else ()
    return torchsymbol(*torch_fns, method=methods)(impl)


_UNARY = {
    # name: (promotion, torch callables)
    "abs": (P.COMPLEX_TO_FLOAT, (torch.abs, torch.Tensor.abs, torch.Tensor.__abs__)),
    "neg": (P.DEFAULT, (torch.neg, torch.negative, torch.Tensor.neg, torch.Tensor.__neg__)),
    "exp": (P.INT_TO_FLOAT, (torch.exp, torch.Tensor.exp)),
    "exp2": (P.INT_TO_FLOAT, (torch.exp2, torch.Tensor.exp2, torch.special.exp2)),
    "expm1": (P.INT_TO_FLOAT, (torch.expm1, torch.Tensor.expm1, torch.special.expm1)),
    "log": (P.INT_TO_FLOAT, (torch.log, torch.Tensor.log)),
    "log1p": (P.INT_TO_FLOAT, (torch.log1p, torch.Tensor.log1p, torch.special.log1p)),
    "log2": (P.INT_TO_FLOAT, (torch.log2, torch.Tensor.log2)),
    "log10": (P.INT_TO_FLOAT, (torch.log10, torch.Tensor.log10)),
    "sin": (P.INT_TO_FLOAT, (torch.sin, torch.Tensor.sin)),
    "cos": (P.INT_TO_FLOAT, (torch.cos, torch.Tensor.cos)),
    "tan": (P.INT_TO_FLOAT, (torch.tan, torch.Tensor.tan)),
    "asin": (P.INT_TO_FLOAT, (torch.asin, torch.arcsin, torch.Tensor.asin, torch.Tensor.arcsin)),
    "acos": (P.INT_TO_FLOAT, (torch.acos, torch.arccos, torch.Tensor.acos, torch.Tensor.arccos)),
    "atan": (P.INT_TO_FLOAT, (torch.atan, torch.arctan, torch.Tensor.atan, torch.Tensor.arctan)),
    "sinh": (P.INT_TO_FLOAT, (torch.sinh, torch.Tensor.sinh)),
    "cosh": (P.INT_TO_FLOAT, (torch.cosh, torch.Tensor.cosh)),
    "tanh": (P.INT_TO_FLOAT, (torch.tanh, torch.Tensor.tanh, torch.nn.functional.tanh)),
    "asinh": (P.INT_TO_FLOAT, (torch.asinh, torch.arcsinh, torch.Tensor.asinh)),
    "acosh": (P.INT_TO_FLOAT, (torch.acosh, torch.arccosh, torch.Tensor.acosh)),
    "atanh": (P.INT_TO_FLOAT, (torch.atanh, torch.arctanh, torch.Tensor.atanh)),
    "sqrt": (P.INT_TO_FLOAT, (torch.sqrt, torch.Tensor.sqrt)),
    "rsqrt": (P.INT_TO_FLOAT, (torch.rsqrt, torch.Tensor.rsqrt)),
    "erf": (P.INT_TO_FLOAT, (torch.erf, torch.Tensor.erf, torch.special.erf)),
    "erfc": (P.INT_TO_FLOAT, (torch.erfc, torch.Tensor.erfc, torch.special.erfc)),
    "erfinv": (P.INT_TO_FLOAT, (torch.erfinv, torch.Tensor.erfinv, torch.special.erfinv)),
    "lgamma": (P.INT_TO_FLOAT, (torch.lgamma, torch.Tensor.lgamma, torch.special.gammaln)),
    "digamma": (P.INT_TO_FLOAT, (torch.digamma, torch.Tensor.digamma, torch.special.digamma, torch.special.psi)),
    "floor": (P.DEFAULT, (torch.floor, torch.Tensor.floor)),
    "ceil": (P.DEFAULT, (torch.ceil, torch.Tensor.ceil)),
    "trunc": (P.DEFAULT, (torch.trunc, torch.fix, torch.Tensor.trunc, torch.Tensor.fix)),
    "sign": (P.DEFAULT, (torch.sign, torch.Tensor.sign)),
    "signbit": (P.ALWAYS_BOOL, (torch.signbit, torch.Tensor.signbit)),
    "reciprocal": (P.INT_TO_FLOAT, (torch.reciprocal, torch.Tensor.reciprocal)),
    "logical_not": (P.ALWAYS_BOOL, (torch.logical_not, torch.Tensor.logical_not)),
    "bitwise_not": (P.DEFAULT, (torch.bitwise_not, torch.Tensor.bitwise_not, torch.Tensor.__invert__)),
    "isfinite": (P.ALWAYS_BOOL, (torch.isfinite, torch.Tensor.isfinite)),
    "isnan": (P.ALWAYS_BOOL, (torch.isnan, torch.Tensor.isnan)),
    "isinf": (P.ALWAYS_BOOL, (torch.isinf, torch.Tensor.isinf)),
}
for _name, (_promotion, _fns) in _UNARY.items():
    globals()[_name] = _unary(_name, _promotion, *dict.fromkeys(_fns))


def _binary(name, prim_name, promotion, *torch_fns, methods=()):
    prim = prims.all_prims[prim_name]

    def impl(a, b):
        return elementwise(prim, a, b, promotion=promotion)

    impl.__name__ = name
    return torchsymbol(*torch_fns, method=methods)(impl)


_BINARY = {
    # name: (prim, promotion, torch callables, tensor method names)
    "mul": ("mul", P.DEFAULT, (torch.mul, torch.multiply, torch.Tensor.mul, torch.Tensor.multiply),
            ("mul", "multiply", "__mul__", "__rmul__")),
    "maximum": ("maximum", P.DEFAULT, (torch.maximum, torch.Tensor.maximum), ("maximum",)),
    "minimum": ("minimum", P.DEFAULT, (torch.minimum, torch.Tensor.minimum), ("minimum",)),
    "atan2": ("atan2", P.INT_TO_FLOAT, (torch.atan2, torch.arctan2, torch.Tensor.atan2), ("atan2", "arctan2")),
    "fmod": ("fmod", P.DEFAULT, (torch.fmod, torch.Tensor.fmod), ("fmod",)),
    "remainder": ("remainder", P.DEFAULT, (torch.remainder, torch.Tensor.remainder, torch.Tensor.__mod__),
                  ("remainder", "__mod__")),
    "eq": ("eq", P.ALWAYS_BOOL, (torch.eq, torch.Tensor.eq, torch.Tensor.__eq__), ("eq", "__eq__")),
    "ne": ("ne", P.ALWAYS_BOOL, (torch.ne, torch.not_equal, torch.Tensor.ne, torch.Tensor.__ne__), ("ne", "not_equal", "__ne__")),
    "lt": ("lt", P.ALWAYS_BOOL, (torch.lt, torch.less, torch.Tensor.lt, torch.Tensor.__lt__), ("lt", "less", "__lt__")),
    "le": ("le", P.ALWAYS_BOOL, (torch.le, torch.less_equal, torch.Tensor.le, torch.Tensor.__le__),
           ("le", "less_equal", "__le__")),
    "gt": ("gt", P.ALWAYS_BOOL, (torch.gt, torch.greater, torch.Tensor.gt, torch.Tensor.__gt__), ("gt", "greater", "__gt__")),
    "ge": ("ge", P.ALWAYS_BOOL, (torch.ge, torch.greater_equal, torch.Tensor.ge, torch.Tensor.__ge__),
           ("ge", "greater_equal", "__ge__")),
    "bitwise_and": ("bitwise_and", P.DEFAULT, (torch.bitwise_and, torch.Tensor.bitwise_and, torch.Tensor.__and__),
                    ("bitwise_and", "__and__", "__rand__")),
    "bitwise_or": ("bitwise_or", P.DEFAULT, (torch.bitwise_or, torch.Tensor.bitwise_or, torch.Tensor.__or__),
                   ("bitwise_or", "__or__", "__ror__")),
    "bitwise_xor": ("bitwise_xor", P.DEFAULT, (torch.bitwise_xor, torch.Tensor.bitwise_xor, torch.Tensor.__xor__),
                    ("bitwise_xor", "__xor__", "__rxor__")),
    "bitwise_left_shift": ("shift_left", P.DEFAULT, (torch.bitwise_left_shift, torch.Tensor.bitwise_left_shift,
                           torch.Tensor.__lshift__), ("bitwise_left_shift", "__lshift__")),
    "bitwise_right_shift": ("shift_right", P.DEFAULT, (torch.bitwise_right_shift, torch.Tensor.bitwise_right_shift,
                            torch.Tensor.__rshift__), ("bitwise_right_shift", "__rshift__")),
}
for _name, (_prim, _promotion, _fns, _methods) in _BINARY.items():
    globals()[_name] = _binary(_name, _prim, _promotion, *dict.fromkeys(_fns), methods=_methods)


# The symbols the tables above made, under their names, for the decompositions below.
(trunc, remainder, mul, reciprocal, exp, neg, lt, gt, maximum, minimum) = (
    language_symbols[n] for n in ("trunc", "remainder", "mul", "reciprocal", "exp", "neg", "lt", "gt", "maximum", "minimum")
)


@torchsymbol(torch.add, torch.Tensor.add, method=("add", "__add__", "__radd__"))
def add(a, b, *, alpha=None):
    if alpha is not None:
        return _with_alpha(prims.add, a, b, alpha)
    return elementwise(prims.add, a, b)


@torchsymbol(torch.sub, torch.subtract, torch.Tensor.sub, torch.Tensor.subtract, method=("sub", "subtract", "__sub__"))
def sub(a, b, *, alpha=None):
    _check_no_bool_subtraction(a, b)
    if alpha is not None:
        return _with_alpha(prims.sub, a, b, alpha)
    return elementwise(prims.sub, a, b)


def _with_alpha(prim, a, b, alpha):
    """``a +/- alpha * b`` as eager computes it: alpha takes no part in type promotion (a bool sum stays bool, an
    integer one integer), and must fit the result's kind."""
    if not (isinstance(a, TensorProxy) or isinstance(b, TensorProxy)):
        return elementwise(prim, a, b * alpha)
    _, result_dtype = result_dtypes(a, b)
    integral = dtypes.is_integer_dtype(result_dtype) or dtypes.is_boolean_dtype(result_dtype)
    check(not (integral and isinstance(pyval(alpha), float)),
          "For integral input tensors, argument alpha must not be a floating point number.")
    check(not (isinstance(pyval(alpha), bool) and not dtypes.is_boolean_dtype(result_dtype)),
          "Boolean alpha only supported for Boolean results.")
    return convert(elementwise(prim, a, b * alpha), result_dtype)


def _is_bool(x) -> bool:
    return isinstance(x, bool) or isinstance(x, BoolProxy) or (isinstance(x, TensorProxy) and x.dtype is dtypes.bool8)


def _check_no_bool_subtraction(a, b) -> None:
    """Eager's check (its kernel's, so it holds even when the difference is never used)."""
    if not (isinstance(a, TensorProxy) or isinstance(b, TensorProxy)):
        return
    check(not (_is_bool(a) and _is_bool(b)), "Subtraction, the `-` operator, with two bool tensors is not supported. "
          "Use the `^` or `logical_xor()` operator instead.")
    check(not (_is_bool(a) or _is_bool(b)), "Subtraction, the `-` operator, with a bool tensor is not supported. "
          "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


@torchsymbol(method="__rsub__")
def rsub(a, b, *, alpha=None):
    return sub(b, a) if alpha is None else sub(b, a, alpha=alpha)


@torchsymbol(torch.true_divide, torch.div, torch.divide, torch.Tensor.div, torch.Tensor.divide,
             torch.Tensor.true_divide, method=("div", "divide", "true_divide", "__truediv__", "__div__"))
def div(a, b, *, rounding_mode=None):
    if rounding_mode is None:
        return elementwise(prims.div, a, b, promotion=P.INT_TO_FLOAT)
    if rounding_mode == "trunc":
        out = elementwise(prims.div, a, b)
        return trunc(out) if dtypes.is_float_dtype(out.dtype) else out
    check(rounding_mode == "floor", lambda: f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
          f"found '{rounding_mode}'", ValueError)
    return elementwise(prims.floor_divide, a, b)  # not the floor_divide symbol: this one has zero gradients


def rtruediv(a, b):
    # eager's Tensor.__rdiv__ (Python over two ops, as here): the reciprocal times the number, with its rounding, and
    # a backward that saves the reciprocal, not ``a``, which the caller may update in place before the backward
    return mul(reciprocal(a), b)


register_method("__rtruediv__", rtruediv)
register_method("__rdiv__", rtruediv)


@torchsymbol(torch.floor_divide, torch.Tensor.floor_divide, method=("floor_divide", "__floordiv__"))
def floor_divide(a, b):
    return elementwise(prims.floor_divide, a, b)


@torchsymbol(method="__rfloordiv__")
def rfloordiv(a, b):
    return floor_divide(b, a)


@torchsymbol(method="__rlshift__")
def rlshift(a, b):
    return language_symbols["bitwise_left_shift"](b, a)


@torchsymbol(method="__rrshift__")
def rrshift(a, b):
    return language_symbols["bitwise_right_shift"](b, a)


@torchsymbol(method="__rmod__")
def rmod(a, b):
    return remainder(b, a)


@torchsymbol(torch.pow, torch.Tensor.pow, method=("pow", "__pow__"))
def pow(a, b):
    if isinstance(b, (int, float)) and not isinstance(b, bool) and b == 2 and isinstance(a, TensorProxy):
        # x * x in the result's dtype (a bool tensor squared is int64, an int tensor ** 2.0 is float, as in eager)
        a = convert(a, result_dtypes(a, b)[1])
        return mul(a, a)
    return elementwise(prims.pow, a, b)


@torchsymbol(method="__rpow__")
def rpow(a, b):
    return pow(b, a)


@torchsymbol(torch.where)
def where(condition, a=None, b=None):
    check(a is not None and b is not None, "torch.where(condition) with one argument (nonzero) is not supported yet",
          NotImplementedError)
    tensors = [x for x in (condition, a, b) if isinstance(x, TensorProxy)]
    shape = broadcast_shapes(*[t.shape for t in tensors])
    _, result_dtype = result_dtypes(a, b)
    if isinstance(condition, TensorProxy):
        condition = convert(condition, dtypes.bool8)
    return prims.where(expand_to(condition, shape), convert(expand_to(a, shape), result_dtype),
                       convert(expand_to(b, shape), result_dtype))


def _where_method(a, condition, other):
    return where(condition, a, other)


# the method's receiver is the values where the condition holds, not the condition: a.where(c, b) is where(c, a, b)
register_method("where", _where_method, torch.Tensor.where)


@torchsymbol(torch.sigmoid, torch.Tensor.sigmoid, torch.nn.functional.sigmoid, torch.special.expit, method="sigmoid")
def sigmoid(a):
    return reciprocal(add(exp(neg(a)), 1))


@torchsymbol(torch.clamp, torch.clip, torch.Tensor.clamp, torch.Tensor.clip, method=("clamp", "clip"))
def clamp(a, min=None, max=None):
    check(min is not None or max is not None, "torch.clamp: At least one of 'min' or 'max' must not be None")
    if min is not None:
        a = where(lt(a, min), min, a) if not isinstance(min, TensorProxy) else maximum(a, min)
    if max is not None:
        a = where(gt(a, max), max, a) if not isinstance(max, TensorProxy) else minimum(a, max)
    return a
