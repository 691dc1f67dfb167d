"""Prims: the small closed set of operations every transform and executor understands.

Everything in the torch language decomposes into these. Each prim has exactly one meta, which
validates its inputs and computes output proxies; grad rules, shape rules and executor
implementations are registered against the prim elsewhere, in tables keyed by the prim.

Prims are strict where the torch language is lenient: elementwise prims take tensors of one shape,
dtype and device (numbers are allowed and do not participate in type promotion); broadcasting and
type promotion are the torch language's job.
"""

from __future__ import annotations

import builtins
import math
import operator
from enum import Enum

from thunder.core import dtypes
from thunder.core.devices import to_device
from thunder.core.errors import check
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy, proxy_number, pyval
from thunder.core.shapes import as_ints, canonicalize_dim, canonicalize_dims
from thunder.core.symbol import Symbol

__all__ = ["all_prims", "make_prim", "ElementwiseKind"]  # and PrimIDs, made on first use (__getattr__)

all_prims: dict[str, Symbol] = {}


def make_prim(name: str, meta, *, tags: tuple = ()) -> Symbol:
    sym = Symbol(name, meta, id=f"prims.{name}", is_prim=True, module="thunder.core.prims", alias="prims", tags=tags)
    all_prims[name] = sym
    globals()[name] = sym
    return sym


def _tensor(shape, dtype, device, requires_grad=False) -> TensorProxy:
    return TensorProxy(shape=shape, dtype=dtype, device=device, requires_grad=requires_grad)


def _any_requires_grad(*xs) -> bool:
    return any(isinstance(x, TensorProxy) and x.requires_grad for x in xs)


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------


class ElementwiseKind(Enum):
    SAME = "same"  # output dtype = input dtype
    BOOL = "bool"  # comparisons and predicates
    REAL = "real"  # complex -> real (abs, real, imag)


def _number_result(python_fn, args):
    values = [pyval(a) for a in args]
    try:
        result = python_fn(*values)
    except (ArithmeticError, ValueError):
        if not any(getattr(a, "data_dependent", False) for a in args):
            raise
        result = float("nan")  # a sample value of a data-dependent number: only a placeholder
    if any(isinstance(a, NumberProxy) and not a.static for a in args):
        out = proxy_number(result)
        out.data_dependent = any(getattr(a, "data_dependent", False) for a in args)
        return out
    return result


def _elementwise_meta(name: str, kind: ElementwiseKind, python_fn, differentiable: bool):
    def meta(*args):
        tensors = [a for a in args if isinstance(a, TensorProxy)]
        for a in args:
            check(
                isinstance(a, (TensorProxy, NumberProxy, bool, int, float, complex)),
                lambda: f"prims.{name}: expected tensors or numbers, got {type(a).__name__}",
                TypeError,
            )
        if not tensors:
            check(python_fn is not None, lambda: f"prims.{name} has no number form", TypeError)
            guard = _NUMBER_TYPE_GUARDS.get(name)
            if guard is not None and any(isinstance(a, NumberProxy) and not a.static for a in args):
                guard(*args)
            return _number_result(python_fn, args)
        t0 = tensors[0]
        for t in tensors[1:]:
            check(t.shape == t0.shape, lambda: f"prims.{name}: shapes differ: {t0.shape} and {t.shape}")
            check(t.dtype is t0.dtype, lambda: f"prims.{name}: dtypes differ: {t0.dtype} and {t.dtype}")
            check(t.device == t0.device, lambda: f"prims.{name}: devices differ: {t0.device} and {t.device}")
        if kind is ElementwiseKind.BOOL:
            dtype, rg = dtypes.bool8, False
        elif kind is ElementwiseKind.REAL:
            dtype, rg = dtypes.corresponding_real_dtype(t0.dtype), differentiable and _any_requires_grad(*args)
        else:
            dtype, rg = t0.dtype, differentiable and _any_requires_grad(*args)
        return _tensor(t0.shape, dtype, t0.device, rg and not dtypes.is_integer_dtype(dtype))

    meta.__name__ = f"{name}_meta"
    return meta


def _c_div(a, b):
    # Integer division rounds toward zero here (as C does); the torch language picks the rounding.
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _pow_type_guard(a, b):
    """``int ** int`` is a float for a negative exponent, and ``float ** float`` is complex for a negative base
    and a non-integral exponent: the result's type, which the trace fixes, depends on the values, so the
    condition that chose it becomes a constraint the prologue checks."""
    if isinstance(pyval(a), complex) or isinstance(pyval(b), complex) or getattr(a, "data_dependent", False):
        return
    if isinstance(pyval(a), int) and isinstance(pyval(b), int):
        bool(b >= 0)
    elif not bool(a >= 0):
        bool(b == all_prims["floor"](b))


# prim -> guard(*number_args) recording the constraints under which its number result keeps its type
_NUMBER_TYPE_GUARDS = {"pow": _pow_type_guard}


_S, _B, _R = ElementwiseKind.SAME, ElementwiseKind.BOOL, ElementwiseKind.REAL
# name: (kind, python function on numbers or None, whether eager's autograd tracks the result: floor's is, with zero
# gradients, so its output requires grad)
_unary = {
    "abs": (_R, abs, True), "neg": (_S, operator.neg, True), "exp": (_S, math.exp, True),
    "exp2": (_S, lambda x: 2.0**x, True), "expm1": (_S, math.expm1, True), "log": (_S, math.log, True),
    "log1p": (_S, math.log1p, True), "log2": (_S, math.log2, True), "log10": (_S, math.log10, True),
    "sin": (_S, math.sin, True), "cos": (_S, math.cos, True), "tan": (_S, math.tan, True),
    "asin": (_S, math.asin, True), "acos": (_S, math.acos, True), "atan": (_S, math.atan, True),
    "sinh": (_S, math.sinh, True), "cosh": (_S, math.cosh, True), "tanh": (_S, math.tanh, True),
    "asinh": (_S, math.asinh, True), "acosh": (_S, math.acosh, True), "atanh": (_S, math.atanh, True),
    "sqrt": (_S, math.sqrt, True), "rsqrt": (_S, lambda x: 1 / math.sqrt(x), True),
    "erf": (_S, math.erf, True), "erfc": (_S, math.erfc, True), "erfinv": (_S, None, True),
    "lgamma": (_S, math.lgamma, True), "digamma": (_S, None, True),
    "floor": (_S, math.floor, True), "ceil": (_S, math.ceil, True), "round": (_S, round, True),
    "trunc": (_S, math.trunc, True), "sign": (_S, lambda x: (x > 0) - (x < 0), True),
    "signbit": (_B, lambda x: math.copysign(1, x) < 0, False), "reciprocal": (_S, lambda x: 1 / x, True),
    "logical_not": (_B, operator.not_, False), "bitwise_not": (_S, operator.invert, False),
    "isfinite": (_B, math.isfinite, False), "isnan": (_B, math.isnan, False), "isinf": (_B, math.isinf, False),
    "real": (_R, lambda x: x.real, True), "imag": (_R, lambda x: x.imag, True),
}
_binary = {
    "add": (_S, operator.add, True), "sub": (_S, operator.sub, True), "mul": (_S, operator.mul, True),
    "div": (_S, _c_div, True), "floor_divide": (_S, operator.floordiv, True),
    "fmod": (_S, math.fmod, True), "remainder": (_S, operator.mod, True), "pow": (_S, operator.pow, True),
    "maximum": (_S, max, True), "minimum": (_S, min, True), "atan2": (_S, math.atan2, True),
    "eq": (_B, operator.eq, False), "ne": (_B, operator.ne, False), "lt": (_B, operator.lt, False),
    "le": (_B, operator.le, False), "gt": (_B, operator.gt, False), "ge": (_B, operator.ge, False),
    "bitwise_and": (_S, operator.and_, False), "bitwise_or": (_S, operator.or_, False),
    "bitwise_xor": (_S, operator.xor, False), "shift_left": (_S, operator.lshift, False),
    "shift_right": (_S, operator.rshift, False),
}
for _name, (_kind, _fn, _diff) in {**_unary, **_binary}.items():
    make_prim(_name, _elementwise_meta(_name, _kind, _fn, _diff), tags=("elementwise",))
number_functions = {name: fn for name, (_, fn, _) in {**_unary, **_binary}.items() if fn is not None}


def _where_meta(pred, a, b):
    tensors = [x for x in (pred, a, b) if isinstance(x, TensorProxy)]
    check(bool(tensors), "prims.where needs at least one tensor", TypeError)
    shape, device = tensors[0].shape, tensors[0].device
    for t in tensors:
        check(t.shape == shape, lambda: f"prims.where: shapes differ: {shape} and {t.shape}")
    if isinstance(pred, TensorProxy):
        check(pred.dtype is dtypes.bool8, lambda: f"prims.where: the condition must be bool, got {pred.dtype}")
    values = [x for x in (a, b) if isinstance(x, TensorProxy)]
    dtype = values[0].dtype if values else dtypes.to_dtype(type(pyval(a)))
    if isinstance(dtype, type):
        dtype = {bool: dtypes.bool8, int: dtypes.int64, float: dtypes.float32, complex: dtypes.complex64}[dtype]
    return _tensor(shape, dtype, device, _any_requires_grad(a, b))


make_prim("where", _where_meta, tags=("elementwise",))


# Python operator (dunder name without underscores) -> the prim it records on numbers
_NUMBER_OPERATORS = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "true_divide_numbers", "floordiv": "floor_divide",
    "mod": "remainder", "pow": "pow", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "shift_left", "rshift": "shift_right", "neg": "neg", "abs": "abs", "invert": "bitwise_not",
    "floor": "floor", "ceil": "ceil", "trunc": "trunc", "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt",
    "ge": "ge",
}


def _number_dunder(name: str, *args):
    """NumberProxy operators: ``x + 1`` records prims.add on numbers (reflected forms swap args)."""
    if name.startswith("r") and name[1:] in _NUMBER_OPERATORS or name == "rdivmod":
        args = args[::-1]
        name = name[1:]
    if name == "divmod":
        return _number_dunder("floordiv", *args), _number_dunder("mod", *args)
    if name == "pos":  # +n is n; +True is 1
        (a,) = args
        return all_prims["convert_element_type"](a, int) if a.python_type is bool else a
    name = _NUMBER_OPERATORS[name]
    simplified = _identity(name, *args)
    if simplified is not None:
        return simplified
    return all_prims[name](*args)


def _is_int(x, value) -> bool:
    return type(x) is int and x == value


def _identity(name: str, *args):
    """``s0 + 0``, ``s0 * 1``, ``s0 // 1`` are ``s0``: no new number, so shapes stay readable."""
    if len(args) != 2:
        return None
    a, b = args
    if name in ("add", "sub") and _is_int(b, 0) or name in ("mul", "floor_divide") and _is_int(b, 1):
        return a
    if name == "add" and _is_int(a, 0) or name == "mul" and _is_int(a, 1):
        return b
    return None


def _true_divide_numbers_meta(a, b):
    return _number_result(operator.truediv, (a, b))


make_prim("true_divide_numbers", _true_divide_numbers_meta)
number_functions["true_divide_numbers"] = operator.truediv


def _round_to_digits_meta(a, ndigits):
    check(not isinstance(a, TensorProxy), "prims.round_to_digits is for numbers; tensors use the torch language",
          TypeError)
    return _number_result(builtins.round, (a, ndigits))  # ``round`` here is the prim


make_prim("round_to_digits", _round_to_digits_meta)  # round(x, ndigits) of a number
number_functions["round_to_digits"] = builtins.round


# ---------------------------------------------------------------------------------------------
# Type conversion, creation
# ---------------------------------------------------------------------------------------------


def _convert_element_type_meta(a, dtype):
    dtype = dtypes.to_dtype(dtype)
    if isinstance(a, TensorProxy):
        rg = a.requires_grad and not (dtypes.is_integer_dtype(dtype) or dtypes.is_boolean_dtype(dtype))
        return _tensor(a.shape, dtype, a.device, rg)
    return _number_result({bool: bool, int: int, float: float, complex: complex}[dtype], (a,))


make_prim("convert_element_type", _convert_element_type_meta)


def _item_meta(a):
    check(isinstance(a, TensorProxy) and a.numel() == 1,
          lambda: f"a Tensor with {a.numel()} elements cannot be converted to Scalar", RuntimeError)
    python_type = {"bool": bool, "int": int, "float": float, "complex": complex}[a.dtype.kind]
    sample = python_type(0)
    if a.outside is not None:
        sample = a.outside("item")  # the value now, shown in traces; never relied on
    proxy = proxy_number(python_type(sample))
    proxy.data_dependent = True
    return proxy


make_prim("item", _item_meta)


def _check_shape(shape, what):
    for d in shape:
        check(isinstance(d, (int, NumberProxy)) and not isinstance(d, bool),
              lambda: f"{what}: shape entries must be integers, got {shape}", TypeError)
        check(pyval(d) >= 0, lambda: f"{what}: negative dimension {d} in shape {shape}")


def _full_meta(shape, fill_value, *, device, dtype):
    _check_shape(shape, "prims.full")
    return _tensor(shape, dtypes.to_dtype(dtype), to_device(device))


make_prim("full", _full_meta)


def _iota_meta(length, *, start, step, device, dtype):
    check(pyval(length) >= 0, lambda: f"prims.iota: negative length {length}")
    return _tensor((length,), dtypes.to_dtype(dtype), to_device(device))


make_prim("iota", _iota_meta)


def _uniform_meta(shape, minval, maxval, *, device, dtype):
    _check_shape(shape, "prims.uniform")
    return _tensor(shape, dtypes.to_dtype(dtype), to_device(device))


make_prim("uniform", _uniform_meta, tags=("random",))


def _device_put_meta(a, device):
    return a.replace(device=to_device(device))


make_prim("device_put", _device_put_meta)


# ---------------------------------------------------------------------------------------------
# Shape operations
# ---------------------------------------------------------------------------------------------


def _broadcast_in_dim_meta(a, shape, broadcast_dimensions):
    check(len(broadcast_dimensions) == a.ndim,
          lambda: f"prims.broadcast_in_dim: {a.ndim} dims need {a.ndim} broadcast_dimensions, got {broadcast_dimensions}")
    for d, bd in zip(a.shape, broadcast_dimensions):
        check(0 <= bd < len(shape) and (d is shape[bd] or d == 1 or d == shape[bd]),
              lambda: f"prims.broadcast_in_dim: cannot broadcast {a.shape} to {shape} along {broadcast_dimensions}")
    return a.replace(shape=shape)


make_prim("broadcast_in_dim", _broadcast_in_dim_meta, tags=("shape",))


def _reshape_meta(a, shape):
    from thunder.core.shapes import numel

    _check_shape(shape, "prims.reshape")
    check(numel(shape) == a.numel(), lambda: f"shape '{as_ints(shape)}' is invalid for input of size {a.numel()}")
    return a.replace(shape=tuple(shape))


make_prim("reshape", _reshape_meta, tags=("shape",))


def _transpose_meta(a, permutation):
    check(sorted(permutation) == list(range(a.ndim)),
          lambda: f"prims.transpose: {permutation} is not a permutation of {a.ndim} dims")
    return a.replace(shape=tuple(a.shape[p] for p in permutation))


make_prim("transpose", _transpose_meta, tags=("shape",))


def _slice_meta(a, start_indices, end_indices, strides=None):
    strides = strides if strides is not None else (1,) * a.ndim
    check(len(start_indices) == len(end_indices) == len(strides) == a.ndim,
          lambda: f"prims.slice: need {a.ndim} starts, ends and strides")
    shape = []
    for s, e, st, d in zip(start_indices, end_indices, strides, a.shape):
        check(0 <= s <= e <= d and st >= 1, lambda: f"prims.slice: bad slice [{s}:{e}:{st}] of a dim of length {d}")
        shape.append(e - s if _is_int(st, 1) else (e - s + st - 1) // st)
    return a.replace(shape=tuple(shape))


make_prim("slice", _slice_meta, tags=("shape",))


def _squeeze_meta(a, dims):
    dims = canonicalize_dims(a.ndim, dims)
    for d in dims:
        check(a.shape[d] == 1, lambda: f"prims.squeeze: dim {d} has length {a.shape[d]}, not 1")
    return a.replace(shape=tuple(s for i, s in enumerate(a.shape) if i not in dims))


make_prim("squeeze", _squeeze_meta, tags=("shape",))


def _cat_meta(tensors, dim):
    check(len(tensors) > 0, "torch.cat(): expected a non-empty list of Tensors", RuntimeError)
    t0 = tensors[0]
    dim = canonicalize_dim(t0.ndim, dim)
    size = 0
    for n, t in enumerate(tensors):
        check(t.ndim == t0.ndim, lambda: f"Tensors must have same number of dimensions: got {t0.ndim} and {t.ndim}")
        check(t.dtype is t0.dtype and t.device == t0.device, "prims.cat: tensors must share dtype and device")
        for i, (x, y) in enumerate(zip(t.shape, t0.shape)):
            check(i == dim or x == y, lambda: f"Sizes of tensors must match except in dimension {dim}. "
                  f"Expected size {y} but got size {x} for tensor number {n} in the list.")
        size = size + t.shape[dim]
    shape = list(t0.shape)
    shape[dim] = size
    return _tensor(shape, t0.dtype, t0.device, _any_requires_grad(*tensors))


make_prim("cat", _cat_meta, tags=("shape",))


def _flip_meta(a, dims):
    canonicalize_dims(a.ndim, dims)
    return a.replace()


make_prim("flip", _flip_meta, tags=("shape",))


# The kernels of these prims check their index tensors' values (in bounds) and raise as eager does: the values
# are data, unknown at trace time, so dead-code elimination keeps them (eager raises even when the result is unused)
DATA_CHECKED = ("data_checked",)


def _take_meta(a, indices, dim):
    dim = canonicalize_dim(a.ndim, dim)
    check(dtypes.is_integer_dtype(indices.dtype), lambda: f"index must be an integer tensor, got {indices.dtype}",
          IndexError)
    check(indices.ndim <= 1, "prims.take: indices must be 0-d or 1-d")
    shape = list(a.shape)
    shape[dim] = indices.shape[0] if indices.ndim == 1 else 1
    return a.replace(shape=tuple(shape))


make_prim("take", _take_meta, tags=DATA_CHECKED)


def _take_along_axis_meta(a, indices, dim):
    dim = canonicalize_dim(a.ndim, dim)
    check(indices.ndim == a.ndim, "Index tensor must have the same number of dimensions as input tensor")
    return a.replace(shape=indices.shape)


make_prim("take_along_axis", _take_along_axis_meta, tags=DATA_CHECKED)


def _index_meta(a, indices):
    """Advanced indexing ``a[indices]`` where ``indices`` is a tuple of integer/bool tensors or None (a full slice),
    with PyTorch's placement rule for the indexed dims. A negative index counts from the end, as in PyTorch (an
    index outside ``[-size, size)`` is an error)."""
    idx_tensors = [i for i in indices if i is not None]
    check(all(dtypes.is_integer_dtype(i.dtype) for i in idx_tensors),
          "prims.index: indices must be integer tensors (the torch language turns bool masks into integers)",
          IndexError)
    from thunder.core.shapes import broadcast_shapes

    bshape = broadcast_shapes(*[i.shape for i in idx_tensors])
    positions = [k for k, i in enumerate(indices) if i is not None]
    contiguous = positions == list(range(positions[0], positions[-1] + 1))
    rest = list(a.shape[len(indices):])
    kept = [(k, a.shape[k]) for k, i in enumerate(indices) if i is None]
    if contiguous:
        before = [s for k, s in kept if k < positions[0]]
        after = [s for k, s in kept if k > positions[-1]]
        shape = before + list(bshape) + after + rest
    else:
        shape = list(bshape) + [s for _, s in kept] + rest
    return a.replace(shape=tuple(shape))


make_prim("index", _index_meta, tags=DATA_CHECKED)


# Scatters: the gradients of the gathers above (take, take_along_axis, index) accumulate into zeros.
def _scatter_meta(a, dim, index, source):
    check(isinstance(index, TensorProxy) and dtypes.is_integer_dtype(index.dtype),
          "prims scatters take an integer index tensor", IndexError)
    check(source.dtype is a.dtype, lambda: f"scatter of {source.dtype} values into a {a.dtype} tensor")
    canonicalize_dim(a.ndim, dim)
    return a.replace()


def _index_put_meta(a, indices, values, accumulate):
    check(values.dtype is a.dtype, lambda: f"index_put of {values.dtype} values into a {a.dtype} tensor")
    return a.replace()


make_prim("index_add", _scatter_meta, tags=DATA_CHECKED)  # out = a; out.index_select(dim, index) += source (index 1-D)
make_prim("scatter_add", _scatter_meta, tags=DATA_CHECKED)  # out = a; out[.., index[i], ..] += source[i] along dim
make_prim("index_put", _index_put_meta, tags=DATA_CHECKED)  # out = a; out[indices] = (or +=) values; indices as for prims.index


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


def _reduction_meta(name, output_dtype=None):
    def meta(a, dims, **kwargs):
        dims = canonicalize_dims(a.ndim, dims)
        shape = tuple(s for i, s in enumerate(a.shape) if i not in dims)
        dtype = output_dtype if output_dtype is not None else a.dtype
        if name == "var":
            dtype = dtypes.corresponding_real_dtype(a.dtype)
        return _tensor(shape, dtype, a.device, a.requires_grad and output_dtype is None)

    meta.__name__ = f"{name}_meta"
    return meta


for _name in ("sum", "prod", "amax", "amin"):
    make_prim(_name, _reduction_meta(_name), tags=("reduction",))
make_prim("var", _reduction_meta("var"), tags=("reduction",))  # kwargs: correction


def _argreduction_meta(a, dim):
    shape = () if dim is None else tuple(s for i, s in enumerate(a.shape) if i != canonicalize_dim(a.ndim, dim))
    return _tensor(shape, dtypes.int64, a.device)


make_prim("argmax", _argreduction_meta, tags=("reduction",))
make_prim("argmin", _argreduction_meta, tags=("reduction",))


# ---------------------------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------------------------


def _matmul_meta(a, b):
    # the torch language raised eager's error first (thunder.torch.matmul_errors); these guard the prim itself
    check(a.dtype is b.dtype, lambda: f"prims.matmul: dtypes differ: {a.dtype} and {b.dtype}")
    check(a.ndim >= 1 and b.ndim >= 1, "prims.matmul: both operands need at least one dimension")
    if a.ndim == 1 and b.ndim == 1:
        check(a.shape[0] == b.shape[0], lambda: f"prims.matmul: inner sizes differ: {a.shape[0]} and {b.shape[0]}")
        shape = ()
    else:
        from thunder.core.shapes import broadcast_shapes

        ka = a.shape[-1]
        kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        check(ka == kb, lambda: f"prims.matmul: inner sizes differ: {ka} and {kb}")
        shape = tuple(batch) + (a.shape[-2:-1] if a.ndim >= 2 else ()) + (b.shape[-1:] if b.ndim >= 2 else ())
    return _tensor(shape, a.dtype, a.device, _any_requires_grad(a, b))


make_prim("matmul", _matmul_meta)


def _linear_mismatch(a, w) -> str:
    """Eager's message: linear is a dot, an mv (leading dims folded) or an mm with the weight transposed."""
    k, n = a.shape[-1], w.shape[-1]
    rows = math.prod(a.shape[:-1])
    if w.ndim == 1 and a.ndim == 1:
        return (f"inconsistent tensor size, expected tensor [{k}] and src [{n}] to have the same number of elements, "
                f"but got {k} and {n} elements respectively")
    if w.ndim == 1:
        return f"size mismatch, got input ({rows}), mat ({rows}x{k}), vec ({n})"
    return f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {n}x{w.shape[0]})"


def _linear_meta(a, w, bias):
    check(a.shape[-1] == w.shape[-1], lambda: _linear_mismatch(a, w))
    check(a.dtype is w.dtype, lambda: f"prims.linear: dtypes differ: {a.dtype} and {w.dtype}")
    shape = tuple(a.shape[:-1]) + ((w.shape[0],) if w.ndim == 2 else ())
    return _tensor(shape, a.dtype, a.device, _any_requires_grad(a, w, bias))


make_prim("linear", _linear_meta)


# ---------------------------------------------------------------------------------------------
# In-place updates
# ---------------------------------------------------------------------------------------------


def _copy_meta(computed, *, out, grad_enabled: bool = True):
    check(isinstance(computed, TensorProxy) and isinstance(out, TensorProxy),
          "prims.copy_ and prims.copy_to_out_ take tensors", TypeError)
    check(tuple(computed.shape) == tuple(out.shape) and computed.dtype is out.dtype and computed.device == out.device,
          lambda: f"copy into a {out.type_string()} tensor from a {computed.type_string()} one: shapes, dtypes and "
          "devices must match (the torch language broadcasts and converts first)")
    return None


def _copy_to_out_meta(computed, *, out, grad_enabled: bool = True):
    # The output is ``out`` after the copy (the same tensor at run time); later reads use it, so no
    # transform can mistake a read after the update for one before it.
    _copy_meta(computed, out=out)
    return out.replace()


# ``copy_(computed, out=t)``: t now holds computed's values. The torch language's in-place operations
# end with it; functionalization replaces it by the computed value in later reads.
make_prim("copy_", _copy_meta, tags=("side_effect", "inplace"))
# ``copy_to_out_(computed, out=t)``: the same, with the promise that computed has no later use, so an
# executor may let t alias computed (write the result straight into t). Functionalization emits it
# for every input that was updated.
make_prim("copy_to_out_", _copy_to_out_meta, tags=("side_effect", "inplace"))


def _update_without_grad_meta(value, old):
    return value.replace(requires_grad=old.requires_grad)


# ``old`` updated in place while grad mode was off (``with torch.no_grad(): y.add_(1)``, a write through ``.data``):
# the result holds ``value``, and autograd routes its gradient to ``old`` unchanged, as eager's autograd keeps the
# graph of a tensor updated under no_grad. Functionalization emits it; it runs as ``value``.
make_prim("update_without_grad", _update_without_grad_meta)


def _derivative_not_implemented_meta(g, a, op_name):
    return _tensor(a.shape, a.dtype, a.device)


# the gradient of ``a`` through an op whose derivative eager does not implement (``_unique2``), given the op's output
# cotangent ``g``: the backward that reaches it raises eager's NotImplementedError when it runs; tracing the backward
# is fine (a backward that never reaches the op, as eager's, never runs it). A side effect: eager's engine runs the
# op's node also where no gradient of an input depends on its result (a zero-derivative op before it, ``sign``)
make_prim("derivative_not_implemented", _derivative_not_implemented_meta, tags=("side_effect",))


def _raise_in_backward_meta(g, message, entry_version=0):
    return _tensor(g.shape, g.dtype, g.device)


# the cotangent of an op's output where eager's backward fails on reaching that op (a tensor it saved was updated
# in place afterwards, transforms/saved_versions.py): running it raises eager's RuntimeError, whose version numbers
# count from ``entry_version``, the version of the input the tensor belongs to when the call began. A side effect,
# kept where no gradient depends on its result: eager's engine reaches the op's node all the same
make_prim("raise_in_backward", _raise_in_backward_meta, tags=("side_effect",))


def _tensor_version_meta(a):
    proxy = proxy_number(0)
    proxy.data_dependent = True  # a run-time value, never specialized on
    return proxy


# ``a._version``: how many in-place updates its memory has had (eager's messages about saved tensors count them)
make_prim("tensor_version", _tensor_version_meta)


def _set_grad_enabled_meta(enabled):
    return None


# grad mode changes the program made (torch.no_grad(), the optimizers' step decorator), replayed in order
make_prim("set_grad_enabled", _set_grad_enabled_meta, tags=("side_effect",))
# torch.manual_seed(s) inside the program: the generator is reseeded on every call, in program order
make_prim("manual_seed", _set_grad_enabled_meta, tags=("side_effect", "random"))


def _get_rng_state_meta(*, size):
    return _tensor((size,), dtypes.uint8, to_device("cpu"))


# the CPU generator's state as a value the program holds (freeze_rng_state saves and restores it)
make_prim("get_rng_state", _get_rng_state_meta, tags=("side_effect", "random"))
make_prim("set_rng_state", _set_grad_enabled_meta, tags=("side_effect", "random"))


# ---------------------------------------------------------------------------------------------
# Prologue: reaching inputs and checking what the compiled program assumed
# ---------------------------------------------------------------------------------------------
# Unpacks return an opaque Python value (printed as a proxy-free name by the python executor).


class AnyProxy(Proxy):
    """A Python object in a prologue that is neither tensor nor number (a module, a dict, a list)."""

    __slots__ = ()
    name_prefix = "obj"


def _unpack_meta(*args, **kwargs):
    return AnyProxy()


# unpack_keys(d): the keys of d in iteration order, as a tuple (the program iterated an outside dict)
# unpack_deref(r): what the weak reference r refers to, r()
for _name in ("unpack_attr", "unpack_item", "unpack_keys", "unpack_cell", "unpack_dims", "unpack_lookup", "unpack_type",
              "unpack_deref"):
    make_prim(_name, _unpack_meta, tags=("prologue",))


def _check_meta(*args, **kwargs):
    return None


# check_tensors(guard, checks): check_tensor's arguments (less its guard) of several tensors, the guard one
# TensorGuards over all of them (thunder.frontend.tensor_guards)
for _name in ("check_tensor", "check_tensors", "check_literal", "check_is", "check_type", "check_len", "check_contains",
              "check_hasattr", "check_no_hooks", "check_state",
              "check_arg_count", "check_grad_mode", "check_distinct_storage", "check_strides", "check_tensor_method"):
    make_prim(_name, _check_meta, tags=("prologue",))

# Epilogue: the writes to outside state a program made, replayed on every call.
make_prim("make_value", _unpack_meta, tags=("epilogue",))  # binds a container built by the epilogue to a name
for _name in ("store_attr", "store_item", "store_cell", "delete_attr", "delete_item", "delete_cell", "call_method",
              "call_function"):
    make_prim(_name, _check_meta, tags=("epilogue", "side_effect"))
# the program raised: the epilogue ends by raising a copy of the exception it raised while traced
make_prim("raise_exception", _check_meta, tags=("epilogue", "side_effect"))


def __getattr__(name: str):
    # ``PrimIDs``: lightning-thunder's enum of prim ids (``bsym.sym.id == PrimIDs.ADD``), each member being the id
    # string itself. Built on first use, when every module that makes prims has been imported.
    if name == "PrimIDs":
        ids = Enum("PrimIDs", {n.upper(): sym.id for n, sym in all_prims.items()}, type=str)
        globals()["PrimIDs"] = ids
        return ids
    raise AttributeError(f"module 'thunder.core.prims' has no attribute {name!r}")
