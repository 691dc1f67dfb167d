"""The opaque fallback: torch operations that have no symbol of the torch language yet.

A torch callable with no symbol, called on proxies inside a jitted function, becomes an *opaque*
symbol: one ``Symbol`` per callable (id ``ltorch.opaque.<importable path>``), whose meta runs the
same callable on meta-device tensors to learn the outputs' shapes and dtypes, and which the torch
executor runs as the callable itself. It has no decomposition, so no fusion executor or transform
can look inside it; the first use of each op warns once (:class:`OpaqueFallbackWarning`).

``out=`` and ``inplace=True`` run as the out-of-place call, then the update of the tensor written to.
Refused, with an error naming the op and the user's line:
- in-place torch functions (a name ending in ``_``) with no out-of-place form thunder knows (in-place
  Tensor methods are symbols of :mod:`thunder.torch.inplace`);
- ops whose output shape depends on the data (``nonzero``, ``unique``, ``masked_select``): the meta
  run cannot compute it;
- ops whose outputs are not tensors (``stride()``, ``is_contiguous()``): baking the meta run's value
  into the program would be silently wrong when it depends on more than metadata.

:func:`meta_outputs` is also what the randomness symbols use to compute their outputs.
"""

from __future__ import annotations

import types
import warnings

import torch

from thunder.core import dtypes
from thunder.core.devices import Device, to_device
from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.proxies import NumberProxy, TensorProxy, pyval
from thunder.core.pytree import tree_flatten, tree_map, tree_unflatten
from thunder.core.symbol import Symbol
from thunder.torch.promotion import depends_on_default_dtype

__all__ = [
    "OpaqueFallbackWarning", "opaque_symbol", "call_opaque", "opaque_method", "opaque_lookaside", "meta_outputs",
    "importable_path", "is_random", "may_return_view", "writes_no_argument", "opaque_symbols", "on_new_opaque_symbol",
    "OPAQUE_ID_PREFIX",
]

OPAQUE_ID_PREFIX = "ltorch.opaque."


class OpaqueFallbackWarning(UserWarning):
    """A torch operation with no torch-language symbol runs as one opaque PyTorch call."""


# torch callable -> Symbol
opaque_symbols: dict[object, Symbol] = {}
_warned: set = set()
# callables told about each new opaque symbol (the torch executor registers its implementation)
_listeners: list = []


def on_new_opaque_symbol(listener) -> None:
    """``listener(symbol, torch_callable, importable_path_or_None)`` is called for every opaque symbol,
    those made so far included."""
    _listeners.append(listener)
    for fn, sym in list(opaque_symbols.items()):
        listener(sym, fn, importable_path(fn))


# ---------------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------------

_NAMESPACES = ("torch", "torch.Tensor", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft")
_paths: dict[int, str] | None = None


def _build_paths() -> dict[int, str]:
    import importlib

    paths: dict[int, str] = {}
    for ns in _NAMESPACES:
        obj = importlib.import_module(ns) if ns != "torch.Tensor" else torch.Tensor
        for name in dir(obj):
            if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                continue
            try:
                value = getattr(obj, name)
            except Exception:
                continue
            if callable(value) and not isinstance(value, type):
                paths.setdefault(id(value), f"{ns}.{name}")
    return paths


def importable_path(fn) -> str | None:
    """``torch.special.xlogy`` for the builtin ``torch._C._special.special_xlogy``; None when ``fn`` is not
    reachable under a public torch namespace."""
    global _paths
    if _paths is None:
        _paths = _build_paths()
    path = _paths.get(id(fn))
    if path is not None:
        return path
    if isinstance(fn, torch._ops.OpOverload):
        return f"torch.ops.{fn.namespace}.{fn._opname}.{fn._overloadname}"
    return None


def display_name(fn) -> str:
    path = importable_path(fn)
    if path is not None:
        return path
    module = getattr(fn, "__module__", None) or getattr(getattr(fn, "__objclass__", None), "__module__", None) or "torch"
    return f"{module}.{getattr(fn, '__qualname__', None) or getattr(fn, '__name__', repr(fn))}"


def _short_name(fn) -> str:
    if isinstance(fn, torch._ops.OpOverload):
        return fn._opname
    name = getattr(fn, "__name__", "") or ""
    for prefix in ("special_", "linalg_", "fft_"):
        if name.startswith(prefix) and getattr(fn, "__module__", "") in ("torch._C._special", "torch._C._linalg",
                                                                          "torch._C._fft"):
            return name[len(prefix):]
    return name


# ---------------------------------------------------------------------------------------------
# Classification
# ---------------------------------------------------------------------------------------------

_RANDOM_NAMES = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
                 "multinomial", "normal", "poisson", "rrelu", "gumbel_softmax", "dropout", "dropout1d", "dropout2d",
                 "dropout3d", "alpha_dropout", "feature_alpha_dropout", "feature_dropout", "native_dropout",
                 "binomial", "_standard_gamma", "_sample_dirichlet"}
_DATA_DEPENDENT = {"nonzero", "nonzero_static", "argwhere", "unique", "unique_consecutive", "masked_select",
                   "bincount", "repeat_interleave", "histogram", "histogramdd", "_unique", "_unique2", "where",
                   "masked_scatter"}


def is_random(fn) -> bool:
    """Whether ``fn`` draws from PyTorch's random generator (aten tags it ``nondeterministic_seeded``)."""
    name = _short_name(fn)
    if name in _RANDOM_NAMES:
        return True
    packet = getattr(torch.ops.aten, name, None) if name else None
    try:
        return packet is not None and any(
            torch.Tag.nondeterministic_seeded in getattr(packet, o).tags for o in packet.overloads())
    except Exception:
        return False


def _aten_packet(fn):
    if isinstance(fn, torch._ops.OpOverload):
        return fn.overloadpacket
    if isinstance(fn, torch._ops.OpOverloadPacket):
        return fn
    name = _short_name(fn)
    return getattr(torch.ops.aten, name, None) if name else None


def may_return_view(fn) -> bool:
    """Whether an output of ``fn`` may share memory with an input, by its aten schema (a ``Tensor(a)`` return
    that is not an ``out=`` argument). Without a schema we cannot know, so: yes. An in-place update of such an
    output would have to reach the input, which thunder cannot see through an opaque call."""
    schemas = _schemas(fn)
    return not schemas or any(r.alias_info is not None and not r.alias_info.is_write
                              for schema in schemas for r in schema.returns)


def _schemas(fn) -> list:
    """The aten schemas of ``fn``'s overloads (empty where it has none we can read)."""
    packet = _aten_packet(fn)
    if packet is None:
        return []
    try:
        return [getattr(packet, o)._schema for o in packet.overloads()]
    except Exception:
        return []


def writes_no_argument(fn) -> bool:
    """Whether ``fn`` updates none of its arguments in place, by its aten schema (no ``Tensor(a!)`` argument but
    ``out=``). Without a schema we cannot know, so: no."""
    schemas = _schemas(fn)
    return bool(schemas) and not any(a.alias_info is not None and a.alias_info.is_write and not a.kwarg_only
                                     for schema in schemas for a in schema.arguments)


def _check_not_inplace(fn) -> None:
    """In-place Tensor methods are symbols (thunder.torch.inplace: the out-of-place twin, then the update); an
    in-place torch function reaching the fallback has no twin thunder knows."""
    name = _short_name(fn)
    if (name.endswith("_") and not name.startswith("__")) or (name.startswith("__i") and name.endswith("__")):
        raise UnsupportedError(
            f"{display_name(fn)} is not supported by thunder yet{user_location_suffix()}: it modifies its input in "
            "place and thunder knows no out-of-place form of it to functionalize; write x = f(x) with the "
            "out-of-place form, or x.copy_(f(x)) where other references must see the update"
        )


# ---------------------------------------------------------------------------------------------
# The meta run
# ---------------------------------------------------------------------------------------------


def _concrete_shape(shape) -> tuple[int, ...]:
    # int() of a symbolic size records a constraint: the opaque op's output shapes are only valid for it
    return tuple(int(s) for s in shape)


def _to_meta(x):
    if isinstance(x, TensorProxy):
        t = torch.empty(_concrete_shape(x.shape), dtype=dtypes.to_torch_dtype(x.dtype), device="meta")
        if x.requires_grad and (t.is_floating_point() or t.is_complex()):
            t.requires_grad_(True)
        return t
    if isinstance(x, NumberProxy):
        return x._concrete("an argument of an opaque torch call")  # constrained, like the sizes above
    if isinstance(x, dtypes.dtype):
        return dtypes.to_torch_dtype(x)
    if isinstance(x, Device):
        return x.to_torch()
    return x


_ERROR_RERUN_ELEMENTS = 1 << 16  # the most elements a refused meta run is repeated with to find eager's error
# ops whose meta function checks what only the CUDA kernel asks (grouped_mm's, bfloat16 inputs) while the CPU kernel
# takes more, and whose output shapes do not depend on the data: a CPU call learns its outputs from the CPU kernel
# run on zeros, whatever their size (once, while tracing: one eager call's time and memory). Not every refused op:
# repeat_interleave's meta refuses because its size is in the data.
_META_WRITTEN_FOR_CUDA = {f for f in (getattr(torch, "_grouped_mm", None),) if f is not None}


_META_READS_DATA = "cannot be called on meta tensors"  # PyTorch's words for item()/tolist() of a meta tensor


def _depends_on_values(what: str, reads: str = "the shape of its output depends on") -> UnsupportedError:
    return UnsupportedError(
        f"{what} is not supported by thunder{user_location_suffix()}: {reads} the values of its inputs, which are "
        "not known while tracing; compute it outside the jitted function or use a fixed-shape formulation (e.g. "
        "torch.where instead of boolean-mask indexing)")


def _real_run(fn, meta_args, meta_kwargs, limit: int | None):
    """A call the meta run refused, run again on real CPU zeros of the same shapes and dtypes (and requires_grad):
    PyTorch's Python meta functions word some errors differently from its kernels, so where the kernel refuses
    the call too, its error, which is eager's, is raised. Returns the run's result, or None where it is not made
    (no tensors, more than ``limit`` elements, a kernel not implemented)."""
    leaves = tree_flatten((meta_args, meta_kwargs))[0]
    tensors = [x for x in leaves if isinstance(x, torch.Tensor)]
    if not tensors or (limit is not None and sum(t.numel() for t in tensors) > limit):
        return None

    def real(x):
        if isinstance(x, torch.Tensor):
            return torch.zeros(x.shape, dtype=x.dtype, requires_grad=x.requires_grad)
        return "cpu" if isinstance(x, str) and x == "meta" else x

    args, kwargs = tree_map(real, (meta_args, meta_kwargs))
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        return None
    except (RuntimeError, IndexError, ValueError) as e:
        raise type(e)(*e.args) from None


def meta_outputs(fn, args, kwargs, *, what: str | None = None):
    """Output proxies of ``fn(*args, **kwargs)``, computed by running ``fn`` on meta tensors.

    Validation errors of the meta run (a shape mismatch, a wrong dtype) propagate as PyTorch raised them;
    an op the meta device cannot run (data-dependent output shapes, no meta kernel) and non-tensor outputs
    raise :class:`UnsupportedError`.
    """
    what = what or display_name(fn)
    depends_on_default_dtype()  # PyTorch's own result dtypes may follow it (torch.rand, Python floats)
    tensors = [x for x in tree_flatten((args, kwargs))[0] if isinstance(x, TensorProxy)]
    meta_kwargs = tree_map(_to_meta, kwargs)
    device = tensors[0].device if tensors else None
    if "device" in kwargs and kwargs["device"] is not None:
        device = to_device(pyval(kwargs["device"]) if not isinstance(kwargs["device"], Device)
                           else kwargs["device"])
        meta_kwargs["device"] = "meta"
    elif not tensors:
        device = to_device(torch.get_default_device())
        meta_kwargs["device"] = "meta"
    meta_args = tree_map(_to_meta, args)
    try:
        result = fn(*meta_args, **meta_kwargs)
    except NotImplementedError as e:
        name = _short_name(fn)
        if name in _DATA_DEPENDENT or "data-independent" in str(e) or "data-dependent" in str(e).lower():
            raise _depends_on_values(what) from e
        raise UnsupportedError(
            f"{what} is not supported by thunder yet{user_location_suffix()}: PyTorch cannot compute its output "
            f"shapes on the meta device ({str(e).splitlines()[0][:200]}); rewrite the code without it or file an issue"
        ) from e
    except (RuntimeError, IndexError, ValueError) as e:
        learn = fn in _META_WRITTEN_FOR_CUDA and (device is None or device.type == "cpu")
        result = _real_run(fn, meta_args, meta_kwargs, None if learn else _ERROR_RERUN_ELEMENTS)
        if result is not None and _META_READS_DATA in str(e):
            # the kernel ran on zeros where the meta function wanted a value from the data (item() inside it): the
            # output's shape or a check depends on values, which the meta run cannot see
            raise _depends_on_values(what, "its output's shape or PyTorch's checks inside it read") from e
        if result is None or not learn:
            raise e
    leaves, spec = tree_flatten(result)
    out = []
    for leaf in leaves:
        if isinstance(leaf, torch.Tensor):
            check_device = device if device is not None else to_device("cpu")
            out.append(TensorProxy(shape=tuple(leaf.shape), dtype=dtypes.to_dtype(leaf.dtype), device=check_device,
                                   requires_grad=leaf.requires_grad))
        elif leaf is None:
            out.append(None)
        else:
            raise UnsupportedError(
                f"{what} is not supported by thunder yet{user_location_suffix()}: it returns "
                f"{type(leaf).__name__}, not tensors, and thunder does not bake values computed from metadata into "
                "the program; rewrite the code without it or file an issue"
            )
    if not any(isinstance(o, TensorProxy) for o in out):
        raise UnsupportedError(f"{what} is not supported by thunder yet{user_location_suffix()}: it returns no "
                               "tensor; rewrite the code without it or file an issue")
    return tree_unflatten(out, spec)


# ---------------------------------------------------------------------------------------------
# Symbols
# ---------------------------------------------------------------------------------------------


def opaque_symbol(fn) -> Symbol:
    """The one opaque symbol of the torch callable ``fn`` (made, announced and warned about on first use)."""
    sym = opaque_symbols.get(fn)
    if sym is not None:
        return sym
    path = importable_path(fn)
    qualified = display_name(fn)
    attr = qualified.replace(".", "_").replace(":", "_")

    def meta(*args, **kwargs):
        out = meta_outputs(fn, args, kwargs, what=qualified)
        if fn not in _warned:  # after the meta run: ops refused with an error are not announced as running
            _warned.add(fn)
            warnings.warn(
                f"thunder: {qualified} has no symbol in thunder's torch language yet; it runs as one opaque "
                "PyTorch call (no decomposition: fusion executors and transforms cannot look inside it)",
                OpaqueFallbackWarning, stacklevel=4,
            )
        return out

    # An opaque op may update some of its arguments inside the call (batch_norm's running statistics): it is
    # never dropped for an unused result nor merged with an equal call.
    tags = ("random", "side_effect") if is_random(fn) else ("side_effect",)
    if writes_no_argument(fn):  # its side effect is only a possibility: a restart may run it again
        tags += ("writes_no_argument",)
    if may_return_view(fn):
        tags += ("may_return_view",)
    # Printed (before dispatch) as thunder.torch.opaque.<attr>(...), which this module binds below.
    sym = Symbol(attr, meta, id=f"{OPAQUE_ID_PREFIX}{qualified}", module="thunder.torch.opaque", alias="opaque",
                 tags=tags)
    opaque_symbols[fn] = sym
    globals()[attr] = sym
    for listener in _listeners:
        listener(sym, fn, path)
    return sym


def call_opaque(fn, args, kwargs):
    """``fn(*args, **kwargs)`` recorded as ``fn``'s opaque symbol. ``out=`` and ``inplace=True`` become the
    out-of-place call followed by the update, which functionalization handles like any in-place op."""
    kwargs = dict(kwargs or {})
    _check_not_inplace(fn)
    if kwargs.get("out") is not None:
        from thunder.torch.inplace import with_out

        return with_out(opaque_symbol(fn), args, kwargs)
    if kwargs.get("inplace") is True and args and isinstance(args[0], TensorProxy):
        from thunder.torch.inplace import update

        return update(args[0], opaque_symbol(fn)(*args, **{**kwargs, "inplace": False}))
    return opaque_symbol(fn)(*args, **kwargs)


def opaque_method(proxy, name: str):
    """``proxy.<name>`` for a ``torch.Tensor`` attribute the torch language lacks: a bound method running
    through the fallback, or a property's value computed the same way. None if torch.Tensor has no such name."""
    attr = getattr(torch.Tensor, name, None)
    if attr is None:
        return None
    if type(attr) in (types.MethodDescriptorType, types.WrapperDescriptorType, types.FunctionType,
                      types.BuiltinFunctionType):

        def method(*args, **kwargs):
            return call_opaque(attr, (proxy, *args), kwargs)

        method.__name__ = name
        return method
    getter = getattr(attr, "__get__", None)
    if getter is None:
        return None
    # a property (x.mT, x.H): the getter of torch.Tensor's descriptor, run through the fallback
    return call_opaque(_property_getter(name, attr), (proxy,), {})


_getters: dict[str, object] = {}


def _property_getter(name, descriptor):
    fn = _getters.get(name)
    if fn is None:
        def fn(t):
            return descriptor.__get__(t, type(t))

        fn.__name__ = fn.__qualname__ = f"Tensor_{name}"
        fn.__module__ = "thunder.torch.opaque"
        _getters[name] = fn
    return fn


# ---------------------------------------------------------------------------------------------
# The jit's lookaside
# ---------------------------------------------------------------------------------------------

_BUILTIN_TYPES = (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType)
_lookasides: dict[object, object] = {}
_ignored = None


_overridable = None


def _torch_builtin_kind(fn) -> str | None:
    """"overridable" for a torch builtin (C function, Tensor method descriptor, aten OpOverload) or a public
    torch Python function that dispatches through ``__torch_function__`` (``F.hardtanh``,
    ``torch.functional.unique``): looking those aside at the user's call keeps the user's line on the op (and
    its errors) and skips interpreting torch's dispatch code. "ignored" for a torch builtin that takes no tensor
    to dispatch on (factories such as ``torch.hann_window``, queries such as ``torch.get_default_dtype``).
    None for anything else."""
    if isinstance(fn, torch._ops.OpOverload):
        return "overridable"
    if type(fn) is types.FunctionType:
        global _overridable
        if _overridable is None:
            _overridable = {f for fs in torch.overrides.get_overridable_functions().values() for f in fs
                            if type(f) is types.FunctionType}
        return "overridable" if fn in _overridable else None
    if type(fn) not in _BUILTIN_TYPES:
        return None
    module = getattr(fn, "__module__", None) or getattr(getattr(fn, "__objclass__", None), "__module__", None) or ""
    if not (module == "torch" or module.startswith("torch.")):
        return None
    global _ignored
    if _ignored is None:
        _ignored = torch.overrides.get_ignored_functions()
    return "ignored" if fn in _ignored else "overridable"


def _generator_method(fn) -> bool:
    owner = getattr(fn, "__objclass__", None)  # ``Generator.manual_seed``, as the interpreter calls a method
    return isinstance(getattr(fn, "__self__", None), torch.Generator) or (
        isinstance(owner, type) and issubclass(owner, torch.Generator))


def _holds_tensor(result) -> bool:
    return any(isinstance(x, torch.Tensor) for x in tree_flatten(result)[0])


def opaque_lookaside(fn):
    """For the jit: a replacement for a torch builtin with no symbol (None for anything else). Called on
    proxies, it records the opaque symbol; called on plain values, it runs ``fn`` as before, and a tensor it
    creates becomes part of the trace (:func:`_created_inside`)."""
    try:
        cached = _lookasides.get(fn)
    except TypeError:
        return None
    if cached is not None:
        return cached
    kind = _torch_builtin_kind(fn)
    if kind is None or _generator_method(fn):
        return None  # a generator's methods read or change its state: native calls (frontend/native_state.py)

    def lookaside(*args, **kwargs):
        leaves = tree_flatten((args, kwargs))[0]
        if kind == "overridable" and any(isinstance(x, TensorProxy) for x in leaves):
            return call_opaque(fn, args, kwargs)
        numbers = any(isinstance(x, NumberProxy) for x in leaves)
        try:
            result = fn(*args, **kwargs)
        except TypeError:
            if not numbers:
                raise
            return call_opaque(fn, args, kwargs)  # torch.hann_window(n) of a symbolic n: a symbol of the trace
        if _holds_tensor(result) and not any(isinstance(x, TensorProxy) for x in leaves):
            return _created_inside(fn, args, kwargs, result)
        return result

    _lookasides[fn] = lookaside
    return lookaside


def _all_plain(leaves) -> bool:
    return all(x is None or type(x) in (bool, int, float, complex, str) or isinstance(x, (torch.dtype, torch.device))
               for x in leaves)


_LARGEST_CONSTANT = 4096  # elements of a tensor baked into the printed program as a literal


def _created_inside(fn, args, kwargs, result):
    """A tensor made by a torch call from plain values (``torch.tril_indices(3, 3)``, ``torch.hann_window(4)``)
    must belong to the trace: it is recorded as that call (its arguments are constants the prologue checks),
    or, when PyTorch cannot run the call on the meta device, as ``torch.tensor`` of its values."""
    try:
        return call_opaque(fn, args, kwargs)
    except (UnsupportedError, TypeError, NotImplementedError):
        if is_random(fn) or not _all_plain(tree_flatten((args, kwargs))[0]):
            raise UnsupportedError(
                f"{display_name(fn)} is not supported by thunder yet{user_location_suffix()}: it creates a tensor "
                "from values thunder cannot trace or check on the next call (e.g. a NumPy array); create the tensor "
                "outside the jitted function and pass it in"
            ) from None
    from thunder.torch.creation import tensor

    def constant(t):
        if not isinstance(t, torch.Tensor):
            return t
        if t.numel() > _LARGEST_CONSTANT:
            raise UnsupportedError(
                f"{display_name(fn)} is not supported by thunder yet{user_location_suffix()}: it creates a tensor of "
                f"{t.numel()} elements from plain values, which thunder can neither trace nor bake into the program "
                f"(at most {_LARGEST_CONSTANT}); create it outside the jitted function and pass it in"
            )
        return tensor(t.tolist(), dtype=dtypes.to_dtype(t.dtype), device=to_device(t.device))

    return tree_map(constant, result)
