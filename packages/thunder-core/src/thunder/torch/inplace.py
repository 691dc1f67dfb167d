"""In-place operations: ``a.add_(b)``, ``a[idx] = v``, ``torch.add(a, b, out=c)``, ``a += b``.

Each in-place symbol decomposes into its out-of-place counterpart followed by ``prims.copy_(result,
out=a)`` and returns ``a`` itself, as PyTorch does. Traces are made functional afterwards
(:mod:`thunder.transforms.functionalize`): later reads of ``a`` and of its views read the new value,
and inputs that were updated get one ``prims.copy_to_out_`` at the end.

This module also defines the out-of-place operations that only in-place code needed so far
(index_copy, lerp, addcmul, ...).
"""

from __future__ import annotations

import torch

from thunder.core import dtypes, prims
from thunder.core.errors import check
from thunder.core.proxies import NumberProxy, TensorProxy, tensor_methods
from thunder.core.shapes import as_ints, broadcast_shapes
from thunder.torch import elementwise as ew
from thunder.torch.promotion import can_cast
from thunder.torch.randomness import RANDOM_FILLS, random_fill_like
from thunder.torch.registry import language_symbols, register_method, torchsymbol
from thunder.torch.view_updates import check_view_update

# ---------------------------------------------------------------------------------------------
# Out-of-place operations in-place code needs
# ---------------------------------------------------------------------------------------------


def _like(a: TensorProxy, *written) -> TensorProxy:
    """A tensor like ``a``; it requires grad where a value ``written`` into it does (``zeros.index_add_(0, i, y)``
    with ``y`` requiring grad, as in eager: a later update under no_grad keeps its graph)."""
    return a.replace(requires_grad=a.requires_grad or any(isinstance(w, TensorProxy) and w.requires_grad
                                                          for w in written))


@torchsymbol(torch.clone, torch.Tensor.clone, method="clone")
def clone(a, *, memory_format=None):
    # a copy: the torch executor runs torch.clone; as prims it is a conversion to the same dtype
    return _like(a)


@torchsymbol(torch.index_copy, torch.Tensor.index_copy, method="index_copy", tags=prims.DATA_CHECKED)
def index_copy(a, dim, index, source):
    check(dtypes.is_integer_dtype(index.dtype), "index_copy_(): Expected a long tensor for index", IndexError)
    check(source.dtype is a.dtype, lambda: f"index_copy_(): self and source expected to have the same dtype, but got "
          f"(self) {dtypes.to_torch_dtype(a.dtype)} and (source) {dtypes.to_torch_dtype(source.dtype)}")
    return _like(a, source)


@torchsymbol(torch.index_add, torch.Tensor.index_add, method="index_add", tags=prims.DATA_CHECKED)
def index_add(a, dim, index, source, *, alpha=1):
    check(dtypes.is_integer_dtype(index.dtype), "index_add_(): Expected dtype int32/int64 for index", IndexError)
    return _like(a, source)


@torchsymbol(torch.scatter, torch.Tensor.scatter, method="scatter", tags=prims.DATA_CHECKED)
def scatter(a, dim, index, src=None, *, value=None, reduce=None):
    check(dtypes.is_integer_dtype(index.dtype), "scatter(): Expected dtype int64 for index", RuntimeError)
    return _like(a, src)


@torchsymbol(torch.scatter_add, torch.Tensor.scatter_add, method="scatter_add", tags=prims.DATA_CHECKED)
def scatter_add(a, dim, index, src):
    check(dtypes.is_integer_dtype(index.dtype), "scatter_add(): Expected dtype int64 for index", RuntimeError)
    return _like(a, src)


def _broadcast_check(*operands) -> None:
    """Eager broadcasts a fused op's operands in argument order; the decomposition's order differs, and so
    would the message of a mismatch."""
    broadcast_shapes(*[x.shape for x in operands if isinstance(x, TensorProxy)])


@torchsymbol(torch.lerp, torch.Tensor.lerp, method="lerp")
def lerp(a, end, weight):
    _broadcast_check(a, end, weight)
    return ew.add(a, ew.mul(weight, ew.sub(end, a)))


@torchsymbol(torch.addcmul, torch.Tensor.addcmul, method="addcmul")
def addcmul(a, tensor1, tensor2, *, value=1):
    _broadcast_check(a, tensor1, tensor2)
    return ew.add(a, ew.mul(ew.mul(tensor1, tensor2), value))


@torchsymbol(torch.addcdiv, torch.Tensor.addcdiv, method="addcdiv")
def addcdiv(a, tensor1, tensor2, *, value=1):
    _broadcast_check(a, tensor1, tensor2)
    return ew.add(a, ew.mul(ew.div(tensor1, tensor2), value))


@torchsymbol(torch.detach, torch.Tensor.detach, method="detach")
def detach(a):
    # an alias of a that autograd does not track (functionalization treats it as a view)
    return a.replace(requires_grad=False)


@torchsymbol(name="data")
def data(a):
    """``a.data``: detach's alias with a version counter of its own (eager's ``variable_data``): an update through
    it does not count as an update of ``a`` for autograd's checks (thunder/transforms/saved_versions.py)."""
    return a.replace(requires_grad=False)


register_method("data", data)  # what TensorProxy.data (a property) calls


@torchsymbol(name="setitem", tags=prims.DATA_CHECKED)
def setitem(a, key, value):
    """``a`` with ``a[key] = value`` applied, as a new tensor (the out-of-place form of __setitem__)."""
    from thunder.torch.indexing import check_constant_key, check_index_put_value

    check_index_put_value(a, key, value)
    check_constant_key(a, key)
    if isinstance(value, TensorProxy):
        check(value.device == a.device or value.ndim == 0,
              lambda: f"expected device {a.device} but got device {value.device}")
    # a's positions now hold value's: with grad recorded, the result requires grad where value does (eager's)
    inexact = dtypes.is_float_dtype(a.dtype) or dtypes.is_complex_dtype(a.dtype)
    return a.replace(requires_grad=a.requires_grad or (inexact and isinstance(value, TensorProxy) and value.requires_grad))


# ---------------------------------------------------------------------------------------------
# Updating a tensor in place
# ---------------------------------------------------------------------------------------------

def update(a: TensorProxy, result, *, cast_any: bool = False) -> TensorProxy:
    """Makes ``a`` hold ``result`` (broadcast to a's shape and converted to its dtype) and returns ``a``."""
    check(isinstance(a, TensorProxy), lambda: f"in-place operations need a tensor, got {type(a).__name__}", TypeError)
    if not isinstance(result, TensorProxy):
        result = prims.full(a.shape, result, device=a.device, dtype=a.dtype)
    check(cast_any or can_cast(result.dtype, a.dtype),
          lambda: f"result type {dtypes.torch_scalar_name(result.dtype)} can't be cast to the desired output type "
          f"{dtypes.torch_scalar_name(a.dtype)}")
    if tuple(result.shape) != tuple(a.shape):
        both = broadcast_shapes(a.shape, result.shape)  # eager's message where the two do not broadcast at all
        check(len(result.shape) <= a.ndim and all(d == 1 or d == e for d, e in zip(result.shape[::-1], a.shape[::-1])),
              lambda: f"output with shape {as_ints(a.shape)} doesn't match the broadcast shape {as_ints(both)}")
        result = ew.expand_to(result, a.shape)
    if result.device != a.device:
        result = prims.device_put(result, a.device)
    result = ew.convert(result, a.dtype)
    if torch.is_grad_enabled():
        check_view_update(a, result.requires_grad)
        prims.copy_(result, out=a)
        # eager: autograd records the update, so a computed tensor written with a value that requires grad requires
        # grad from then on (v.copy_(x)); an input doing so is refused by the autograd transform
        if result.requires_grad and a.outside is None:
            a.requires_grad = True
    else:  # under no_grad (an optimizer step): the copy into a leaf that requires grad is allowed
        prims.copy_(result, out=a, grad_enabled=False)
    return a


# In-place methods that write one value to every position they write: eager lets them write through an expand
# that repeats elements (the repeated positions receive the same value); functionalization writes them back
FILLS = frozenset({"fill_", "zero_", "masked_fill_", "index_fill_"})


def _tags(name: str) -> tuple:
    return ("inplace", "fills") if name in FILLS else ("inplace",)


def _inplace(name: str, functional_name: str, *torch_fns, methods=()):
    functional = language_symbols[functional_name]

    def impl(a, *args, **kwargs):
        return update(a, functional(a, *args, **kwargs))

    impl.__name__ = name
    return torchsymbol(*torch_fns, method=(name, *methods), tags=_tags(name))(impl)


# in-place name: (out-of-place symbol, extra Tensor method names)
_INPLACE = {
    "add_": ("add", ("__iadd__",)), "sub_": ("sub", ("__isub__",)), "mul_": ("mul", ("__imul__",)),
    "div_": ("div", ("__itruediv__",)), "floor_divide_": ("floor_divide", ("__ifloordiv__",)),
    "remainder_": ("remainder", ("__imod__",)), "pow_": ("pow", ("__ipow__",)),
    "bitwise_and_": ("bitwise_and", ("__iand__",)), "bitwise_or_": ("bitwise_or", ("__ior__",)),
    "bitwise_xor_": ("bitwise_xor", ("__ixor__",)), "bitwise_left_shift_": ("bitwise_left_shift", ("__ilshift__",)),
    "bitwise_right_shift_": ("bitwise_right_shift", ("__irshift__",)),
    "neg_": ("neg", ()), "abs_": ("abs", ()), "exp_": ("exp", ()), "log_": ("log", ()), "sqrt_": ("sqrt", ()),
    "rsqrt_": ("rsqrt", ()), "sin_": ("sin", ()), "cos_": ("cos", ()), "tanh_": ("tanh", ()),
    "sigmoid_": ("sigmoid", ()), "relu_": ("relu", ()), "floor_": ("floor", ()), "ceil_": ("ceil", ()),
    "trunc_": ("trunc", ()), "reciprocal_": ("reciprocal", ()), "clamp_": ("clamp", ("clip_",)),
    "masked_fill_": ("masked_fill", ()), "index_copy_": ("index_copy", ()), "index_add_": ("index_add", ()),
    "scatter_": ("scatter", ()), "scatter_add_": ("scatter_add", ()), "lerp_": ("lerp", ()),
    "addcmul_": ("addcmul", ()), "addcdiv_": ("addcdiv", ()),
}
for _name, (_functional, _methods) in _INPLACE.items():
    if _functional in language_symbols:
        _torch_fns = [f for f in (getattr(torch.Tensor, _name, None), getattr(torch, _name, None)) if f is not None]
        globals()[_name] = _inplace(_name, _functional, *_torch_fns, methods=_methods)


# In-place methods that make the tensor a view of what it was (same elements, new shape and strides): the tensor
# stays the same Python object and stands for the view from then on (TraceCtx.rebind); an input is changed the same
# way after the call (the epilogue calls the method on the caller's tensor). Name -> (the view method, parameters).
RESTRIDES = {"t_": ("t", ()), "transpose_": ("transpose", ("dim0", "dim1")),
             "swapaxes_": ("transpose", ("axis0", "axis1")), "swapdims_": ("transpose", ("dim0", "dim1")),
             "squeeze_": ("squeeze", ("dim",)), "unsqueeze_": ("unsqueeze", ("dim",))}


def _restride(name: str):
    view_method, params = RESTRIDES[name]

    def impl(a, *args, **kwargs):
        from thunder.core.trace import get_tracectx

        check(isinstance(a, TensorProxy), lambda: f"{name} needs a tensor, got {type(a).__name__}", TypeError)
        unknown = set(kwargs) - set(params[len(args):])
        check(not unknown, lambda: f"{name}() got an unexpected keyword argument '{sorted(unknown)[0]}'", TypeError)
        args = args + tuple(kwargs[p] for p in params[len(args):] if p in kwargs)  # positional, for the replay
        check(name != "t_" or a.ndim <= 2,  # eager names the method it ran
              lambda: f"t_() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
        _check_not_a_leaf(a)
        if torch.is_grad_enabled():
            check_view_update(a, False)
        trace = get_tracectx()
        if trace.on_rebind is None:  # a sub-trace (a branch of torch.cond, a loop body): it shares the outer objects
            from thunder.core.errors import UnsupportedError, user_location_suffix

            raise UnsupportedError(f"torch.Tensor.{name} inside a higher-order operator's body{user_location_suffix()} "
                                   f"is not supported by thunder yet; use the out-of-place form (x = x.{view_method}(...))")
        trace.rebind(a, tensor_methods[view_method](a, *args), (name, args))
        return a

    impl.__name__ = name
    return impl


def _check_not_a_leaf(a: TensorProxy) -> None:
    """Eager's errors for an in-place change of a leaf that requires grad, or of a view of one, in grad mode."""
    if not a.requires_grad:
        return
    if not torch.is_grad_enabled():
        from thunder.core.errors import UnsupportedError, user_location_suffix

        # eager keeps such a tensor in the autograd graph with its new shape, which thunder does not model yet
        raise UnsupportedError(f"an in-place change of the shape of a tensor that requires grad under no_grad"
                               f"{user_location_suffix()} is not supported by thunder yet; use the out-of-place form "
                               "(x = x.t()) or detach the tensor first")
    if a.outside is not None:
        if a.outside("is_leaf"):
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        return
    root = _view_root(a)
    if root is not a and root.outside is not None and root.requires_grad and root.outside("is_leaf"):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def _view_root(a: TensorProxy) -> TensorProxy:
    """The tensor at the end of ``a``'s chain of views, as recorded so far."""
    from thunder.core.trace import get_tracectx
    from thunder.transforms.functionalize import is_view

    producers = {o.name: b for b in get_tracectx().bound_symbols for o in b.flat_proxy_outs}
    b = producers.get(a.name)
    while b is not None and is_view(b) and isinstance(b.args[0], TensorProxy):
        a = b.args[0]
        b = producers.get(a.name)
    return a


for _name in RESTRIDES:
    register_method(_name, _restride(_name), getattr(torch.Tensor, _name))


# In-place methods that change the tensor's storage, size or autograd state: refused
CHANGES_METADATA = frozenset({"resize_", "resize_as_", "as_strided_", "set_", "detach_", "requires_grad_",
                              "share_memory_"})
_METADATA_INSTEAD = {
    "detach_": "use the out-of-place form and rebind the name (x = x.detach())",
    "requires_grad_": "pass in a tensor that requires grad (a parameter or an input), or compute with it outside the "
                      "jitted function",
    "set_": "use the other tensor itself (x = other)",
    "share_memory_": "call it outside the jitted function",
}


# In-place methods whose result must already have the tensor's dtype (no cast back, unlike add_)
_EXACT_RESULT_DTYPE = frozenset({"float_power_"})


def _refused_inplace(name: str, reason: str, instead: str):
    def refuse(a, *args, **kwargs):
        from thunder.core.errors import UnsupportedError, user_location_suffix

        raise UnsupportedError(f"torch.Tensor.{name} is not supported by thunder{user_location_suffix()}: {reason}; "
                               f"{instead}")

    refuse.__name__ = name
    return refuse


def _requires_grad_(refuse):
    def requires_grad_(a, requires_grad=True):
        # asking for what the tensor has already changes nothing (transformers' gradient checkpointing sets it on
        # the embeddings' output, which requires grad where the embeddings train)
        if isinstance(a, TensorProxy) and a.requires_grad == bool(requires_grad):
            return a
        return refuse(a, requires_grad)

    return requires_grad_


def _twin_inplace(name: str):
    """``a.<name>(*args)`` as its out-of-place twin (a language symbol, else the opaque fallback) then the
    update of ``a``."""
    twin = name[:-1]

    def impl(a, *args, **kwargs):
        functional = tensor_methods.get(twin)
        if functional is None:
            from thunder.torch.opaque import opaque_method

            result = opaque_method(a, twin)(*args, **kwargs)
        else:
            result = functional(a, *args, **kwargs)
        if name in _EXACT_RESULT_DTYPE:
            check(result.dtype is a.dtype, lambda: f"the base given to {name} has dtype {dtypes.torch_scalar_name(a.dtype)} but "
                  f"the operation's result requires dtype {dtypes.torch_scalar_name(result.dtype)}")
        return update(a, result)

    impl.__name__ = name
    return impl


def _random_fill(name: str):
    """``a.uniform_(...)``: a tensor like ``a`` filled by that method, then the update of ``a``."""

    def impl(a, *args, **kwargs):
        return update(a, random_fill_like(a, name, *args, **kwargs))

    impl.__name__ = name
    return impl


def _register_inplace_methods() -> None:
    """Every in-place Tensor method not defined above: those with a method twin (``index_fill_`` ->
    ``index_fill``) become twin + update, random fills (``uniform_``) a random tensor + update; those that change
    metadata are refused with the reason."""
    for name in dir(torch.Tensor):
        if not name.endswith("_") or name.startswith("_") or name in tensor_methods:
            continue
        if name in CHANGES_METADATA:
            refuse = _refused_inplace(
                name, "it changes the shape, strides or autograd state of the tensor in place, which a trace (whose "
                "tensors have fixed metadata) cannot express", _METADATA_INSTEAD.get(
                    name, f"use the out-of-place form and rebind the name (x = x.{name[:-1]}(...))"))
            register_method(name, _requires_grad_(refuse) if name == "requires_grad_" else refuse)
        elif name in RANDOM_FILLS:
            globals()[name] = torchsymbol(getattr(torch.Tensor, name), method=name, tags=_tags(name))(
                _random_fill(name))
        elif callable(getattr(torch.Tensor, name[:-1], None)) and not isinstance(
                getattr(torch.Tensor, name[:-1]), property):
            torch_fns = [f for f in (getattr(torch.Tensor, name), getattr(torch, name, None)) if f is not None]
            globals()[name] = torchsymbol(*torch_fns, method=name, tags=_tags(name))(_twin_inplace(name))


@torchsymbol(torch.Tensor.copy_, method="copy_", tags=("inplace",))
def copy_(a, src, non_blocking=False):
    return update(a, src, cast_any=True)


def _copies_onto_itself(a, value, key) -> bool:
    """Whether writing ``value`` into ``a[key]`` copies a tensor onto its very memory, where eager's copy returns
    early: nothing is written or checked."""
    from thunder.core.trace import get_tracectx

    layouts = getattr(get_tracectx(), "layouts", None)
    return (isinstance(a, TensorProxy) and isinstance(value, TensorProxy) and layouts is not None
            and layouts.is_memory_of(value, a, key))


def _copy_method(a, src, non_blocking=False):
    if _copies_onto_itself(a, src, ()):
        return a
    return copy_(a, src, non_blocking)


register_method("copy_", _copy_method)


@torchsymbol(torch.Tensor.fill_, torch.fill_, method="fill_", tags=_tags("fill_"))
def fill_(a, value):
    if isinstance(value, TensorProxy):
        check(value.ndim == 0, lambda: f"fill_ only supports 0-dimension value tensor but got tensor with "
              f"{value.ndim} dimensions.")
        return update(a, value, cast_any=True)
    return update(a, prims.full(a.shape, value, device=a.device, dtype=a.dtype), cast_any=True)


@torchsymbol(torch.Tensor.zero_, torch.zero_, method="zero_", tags=_tags("zero_"))
def zero_(a):
    return fill_(a, 0)


@torchsymbol(torch.Tensor.__setitem__, method="__setitem__", tags=("inplace",))
def setitem_(a, key, value):
    if torch.is_grad_enabled() and isinstance(a, TensorProxy) and _is_basic_key(key):
        check_view_update(a, isinstance(value, TensorProxy) and value.requires_grad, key)
    update(a, setitem(a, key, value))
    return None


def _setitem_method(a, key, value):
    """``a[key] = value``. Where eager's CPU kernel writes the positions before an index out of bounds and then
    raises, those are written first (a symbol that raises records nothing)."""
    from thunder.core.trace import get_tracectx
    from thunder.torch.indexing import written_before_bounds_error

    if _is_basic_key(key) and _copies_onto_itself(a, value, key):
        return None
    if isinstance(a, TensorProxy) and a.device.type == "cpu":
        # an index tensor made of Python numbers has values known now: the same write as the list of them
        constants = getattr(get_tracectx(), "constant_indices", None)
        known = key if constants is None else (
            tuple(map(constants.as_list, key)) if isinstance(key, tuple) else constants.as_list(key))
        partial = written_before_bounds_error(a, known, value)
        if partial is not None:
            setitem_(a, *partial)
    return setitem_(a, key, value)


def _is_basic_key(key) -> bool:
    return all(k is None or k is Ellipsis or isinstance(k, (int, slice, NumberProxy))
               for k in (key if isinstance(key, tuple) else (key,)))


register_method("__setitem__", _setitem_method)


_register_inplace_methods()


def with_out(sym, args, kwargs):
    """``torch.add(a, b, out=c)``: the out-of-place symbol, then ``c`` updated in place (returns ``c``)."""
    out = kwargs.pop("out")
    result = sym(*args, **kwargs)
    if isinstance(out, (tuple, list)):
        for o, r in zip(out, result):
            update(o, r, cast_any=False)
        return out
    return update(out, result)



def set_data(a, value):
    """``a.data = value``: a holds value's contents from now on, outside autograd."""
    check(isinstance(value, TensorProxy), "assigned data must be a tensor", TypeError)
    check(tuple(value.shape) == tuple(a.shape) and value.dtype is a.dtype and value.device == a.device,
          lambda: f"assigning .data of a different shape, dtype or device ({value.type_string()} to "
          f"{a.type_string()}) is not supported by thunder yet; use a new tensor instead")
    prims.copy_(value, out=a, grad_enabled=False)
