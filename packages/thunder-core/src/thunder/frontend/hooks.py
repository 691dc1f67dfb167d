"""How the jit drives the interpreter: torch calls go to the torch language, outside values become
proxies or checked constants, writes to outside state are recorded for the epilogue."""

from __future__ import annotations

import builtins
import enum
import functools
import io
import math
import sysconfig
import types
import warnings
import weakref

import torch
import torch.utils.checkpoint

from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.proxies import (
    IntegerProxy,
    NumberProxy,
    TensorProxy,
    proxy_number,
    tensor_methods,
    torch_function_table,
)
from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.core.symbol import SourceLocation
from thunder.core.trace import get_tracectx
from thunder.distributed.outside_effects import (
    check_module_call,
    check_tensor_input,
    engine_lookaside,
    traced_unsharded,
)
from thunder.frontend.autocast import AutocastRegions, autocast_lookaside, opaque_under_autocast
from thunder.frontend.native_state import refuse_native_call, stateful_object
from thunder.frontend.prologue import InputRecord, proxy_name_for
from thunder.frontend.proxify import tensor_proxy
from thunder.frontend.side_effects import (
    CHANGING_METHODS,
    MUTATING_METHODS,
    READING_MUTATIONS,
    SideEffects,
    refuse_value_returning_mutation,
    warn_at,
)
from thunder.frontend.user_values import SymbolicSize, user_attribute
from thunder.interpreter import (
    Hooks,
    Provenance,
    call_wrapped,
    current_source_location,
    interpreted_frames,
    next_instruction,
)
from thunder.interpreter.calls import native_call
from thunder.interpreter.derivation import ViewSource
from thunder.interpreter.iteration import ProvenanceIterator
from thunder.interpreter.typeutil import hashable as _hashable
from thunder.transforms.constant_indices import ConstantIndices
from thunder.transforms.layouts import Layouts

__all__ = ["JitHooks", "source_location", "made_while_grad_disabled", "interpreted_program"]

_LITERAL_TYPES = (bool, int, float, complex, str, bytes, type(None), torch.dtype, torch.device)
_CONTAINED_LITERALS = (bool, int, float, str, type(None))


def interpreted_program(fn):
    """Decorator: ``fn``, a function of thunder's own, is program code the jit interprets (the calls it makes are
    traced) instead of running it natively as it runs thunder's code."""
    _PROGRAM_FUNCTIONS.add(fn)
    return fn


def _literal_item(v, depth: int) -> bool:
    # slices and ... too: an index tuple like (slice(None), [0, 3]) is a value, compared with == (a stale key would
    # reuse a program indexing other dims)
    return (type(v) in _CONTAINED_LITERALS or v is Ellipsis
            or (type(v) is slice and all(type(f) in _CONTAINED_LITERALS for f in (v.start, v.stop, v.step)))
            or (type(v) in (list, tuple) and _all_literals(v, depth + 1)))


def _all_literals(value, depth: int = 0) -> bool:
    return depth < 4 and all(_literal_item(v, depth) for v in value)
_CLASS_STATE = ("type", "lookup")  # provenance kinds of what attribute lookup found on a class
# Installed packages and the standard library change only by reinstalling (a new process); the caller's own
# code changes in place (IPython's autoreload swaps ``f.__code__``, a notebook cell defines a global ``len``).
_LIBRARY_DIRS = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def _in_library(filename) -> bool:
    return isinstance(filename, str) and filename.startswith(_LIBRARY_DIRS)
_IDENTITY_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, types.ModuleType, torch.Generator,
                   types.CodeType)


def _holds_tensors(value, depth: int = 0) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if depth > 3 or type(value) not in (list, tuple, dict):
        return False
    items = value.values() if type(value) is dict else value
    return any(_holds_tensors(v, depth + 1) for v in items)


def _state_provenance(name: str, holder: str):
    """``layers.0.weight`` -> fn.__dict__['_modules']['layers'].__dict__['_modules']['0'].__dict__[holder]['weight']."""
    *modules, leaf = name.split(".")
    p = Provenance.fn()
    for m in modules:
        p = Provenance.item(Provenance.item(Provenance.attr(p, "__dict__"), "_modules"), m)
    return Provenance.item(Provenance.item(Provenance.attr(p, "__dict__"), holder), leaf)


def _is_bound_method(value) -> bool:
    """Bound methods are made anew on every attribute read, so identity says nothing; the object they are
    bound to is what the prologue reaches."""
    if isinstance(value, types.MethodType):
        return True
    owner = getattr(value, "__self__", None)
    return isinstance(value, types.BuiltinMethodType) and owner is not None and not isinstance(owner, types.ModuleType)


def _contents_checked(value, record) -> bool:
    """Whether the prologue checks everything a native function could read from ``value``."""
    if record.check in ("tensor", "literal", "is"):
        return True
    return isinstance(value, TensorProxy)


def _is_module_state(provenance) -> bool:
    return any(kind == "item" and key in ("_parameters", "_buffers") for kind, key in provenance.path())


def _original(side_effects, container):
    original = side_effects.original(container)  # as it was before the program changed it
    return container if original is None else original


def _passed_directly(provenance) -> bool:
    """Containers passed as arguments or read from globals/closures may go whole to a torch call
    (``torch.stack(tensors)``); containers inside objects (a module's ``_parameters``) are read by key
    through the interpreter, which keeps each item's provenance."""
    return all(kind != "attr" for kind, _ in provenance.path())


# list methods whose effect does not depend on the contents (``remove`` does: it may raise)
_CONTENT_BLIND_WRITERS = frozenset(("append", "extend", "insert", "clear", "reverse"))


def _loaded_to_append() -> bool:
    """Whether the value being loaded is only the receiver of a content-blind list method: the next instruction
    of the program loads that method from it (``LOAD_METHOD append`` / ``LOAD_ATTR append``)."""
    nxt = next_instruction()
    return nxt is not None and nxt.opname in ("LOAD_METHOD", "LOAD_ATTR") and nxt.argval in _CONTENT_BLIND_WRITERS


def source_location():
    loc = current_source_location()
    if loc is None:
        return None
    return SourceLocation(loc.filename, loc.lineno, loc.function, loc.source)


def user_source_location():
    """The innermost interpreted line outside installed packages and the standard library: the user's own."""
    for loc in reversed(interpreted_frames()):
        if not _in_library(loc.filename):
            return SourceLocation(loc.filename, loc.lineno, loc.function, loc.source)
    return None


def _isinstance(obj, classinfo):
    if type(obj) is ProvenanceIterator and obj.stands_for is not None:
        # the interpreter's iterator for zip(...), enumerate(...), iter(a_list), ...: what CPython would have made
        return issubclass(obj.stands_for, classinfo)
    # A proxy stands for a torch.Tensor or a Python number: user code that asks must take that branch.
    stands_for = torch.Tensor if isinstance(obj, TensorProxy) else getattr(obj, "number_type", None)
    if type(obj) is SymbolicSize:
        stands_for = torch.Size
    if isinstance(obj, (TensorProxy, NumberProxy, SymbolicSize)):
        classes = classinfo if isinstance(classinfo, tuple) else (classinfo,)
        if any(isinstance(c, type) and issubclass(stands_for, c) for c in classes):
            return True
    return isinstance(obj, classinfo)


# math.<name> and builtins of a number proxy record the prim of that name (whose number form is the function)
_MATH_ON_NUMBERS = {
    **{getattr(math, name): name for name in (
        "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
        "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "lgamma", "floor", "ceil", "trunc", "fmod", "atan2",
        "isfinite", "isnan", "isinf")},
}  # abs(n) is NumberProxy.__abs__ (the interpreter interprets a Python __abs__ of other objects)


def _math_on_numbers(fn):
    """``math.sqrt(n)`` of a number proxy is recorded (so it may be computed at run time, e.g. from
    ``step.item()``); on plain numbers it is the function itself."""
    prim_name = _MATH_ON_NUMBERS[fn]

    def call(*args):
        if any(isinstance(a, NumberProxy) for a in args):
            from thunder.core import prims

            if fn is math.log and len(args) == 2:  # log(x, base), computed as CPython does
                return prims.log(args[0]) / prims.log(args[1])
            return prims.all_prims[prim_name](*args)
        return fn(*args)

    return call


# thunder's own functions that are program code, interpreted like the user's (see interpreted_program)
_PROGRAM_FUNCTIONS: set = set()
# Library code that does bookkeeping, not math, on objects it owns: run natively (profiler ranges, the
# compiler's own state queries)
_NATIVE_MODULES = ("torch.autograd.profiler", "torch.profiler", "torch._dynamo", "torch._compile", "torch.compiler")


def _set_grad_enabled(enabled):
    """Grad mode changes happen now (the rest of tracing sees them) and again, in order, when the program runs."""
    from thunder.core import prims

    torch._C._set_grad_enabled(enabled)
    prims.set_grad_enabled(bool(enabled))


def made_while_grad_disabled(bsym) -> None:
    """Tensors the program makes while grad mode is off (its mode changes happen for real while it is traced) do
    not require grad: ``y.requires_grad`` reads False, as in eager. As in eager, an input handed back as is
    (``x.float()`` of a float tensor) and a view of a tensor that requires grad (``x[0]``, but not ``x.detach()``)
    keep the flag."""
    if torch.is_grad_enabled():
        return
    from thunder.transforms.functionalize import UNTRACKED_ALIASES, is_view

    if is_view(bsym) and bsym.sym.id not in UNTRACKED_ALIASES:
        return
    inputs = {id(p) for p in bsym.flat_proxy_args}
    for out in bsym.flat_proxy_outs:
        if isinstance(out, TensorProxy) and id(out) not in inputs:
            out.requires_grad = False


class _InferenceModeRegion:
    """``torch._C._InferenceMode(True)`` (what ``torch.inference_mode()`` enters) inside the program: entered for
    real while tracing, and recorded as grad mode off for the region, so tensors made there do not require grad
    when the program runs (they are ordinary tensors, not inference tensors)."""

    def __init__(self, mode: bool = True):
        self.grad_before = torch.is_grad_enabled()
        self.guard, self.mode = torch._C._InferenceMode(mode), bool(mode)  # a guard: active once made

    def __enter__(self):
        from thunder.core import prims

        self.guard.__enter__()
        if self.mode:
            prims.set_grad_enabled(False)
        return self

    def __exit__(self, *exc_info):
        from thunder.core import prims

        self.guard.__exit__(*exc_info)
        if self.mode:
            prims.set_grad_enabled(self.grad_before)
        return False


def _unwrapped(fn):
    """The function under decorators (torch.compile's machinery wraps torch.manual_seed once it is used)."""
    seen = 0
    while hasattr(fn, "__wrapped__") and seen < 8:
        fn, seen = fn.__wrapped__, seen + 1
    return fn


def _compiler_hint(*args, **kwargs):
    return None


# Libraries' "is this tensor being traced?" (transformers' is_tracing(tensor): a torch.fx proxy, a FakeTensor, Dynamo
# compiling): inside thunder.jit every tensor is thunder's proxy, so yes, unless the program computes it from
# constants alone (frontend/constant_reads.py: transformers' position ids made by arange), whose value thunder
# reads while tracing with no split and no check at run time. They ask it to skip checks that read the tensor's
# data (transformers' packed-sequence test, `(mask[:, -1] == 0).all()`), which would split the program at a value
# read (and sync a GPU) on every step; where the value is a constant they run the check as in eager and take
# eager's path (SDPA with is_causal and enable_gqa, not an explicit mask). torch.compiler.is_compiling() stays
# False, as in eager.
def _is_tracing_tensor(tensor=None):
    if not isinstance(tensor, TensorProxy):
        return False
    reader = getattr(get_tracectx(), "value_reader", None)
    return reader is None or not reader.known_at_trace_time(tensor)


# (module, name) of a library function -> what thunder runs in its place, looked up by name so that thunder never
# imports the library (one lookup per interpreted call)
_LRU_CACHE_WRAPPER = type(functools.lru_cache(maxsize=None)(lambda: None))

_BY_NAME = {("transformers.utils.import_utils", "is_tracing"): _is_tracing_tensor}
# Hints to torch.compile about a tensor (a static address for CUDA graphs, which sizes to keep dynamic): thunder
# makes its own choices (the cache options), so inside a jitted program they do nothing; run natively they would
# write attributes onto a proxy
_BY_NAME.update((("torch._dynamo.decorators", name), _compiler_hint) for name in (
    "mark_static_address", "mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_unbacked"))


def _refused_backward(what):
    def refuse(*args, **kwargs):
        raise UnsupportedError(
            f"{what} inside a jitted function is not supported by thunder.jit{user_location_suffix()}: thunder "
            "differentiates the function as a whole, so call .backward() or torch.autograd.grad on the jitted "
            "function's outputs, outside it (a gradient penalty: compute it without thunder.jit)")

    return refuse


# a backward inside the traced program: eager's engine would run on proxies (and raise that they are not in a graph)
_BY_NAME.update({("torch.autograd", "grad"): _refused_backward("torch.autograd.grad"),
                 ("torch.autograd", "backward"): _refused_backward("torch.autograd.backward")})
tensor_methods["backward"] = _refused_backward("Tensor.backward()")


def _refused_autograd_hook(what, eager_error: str):
    def refuse(t, *args, **kwargs):
        if isinstance(t, TensorProxy) and not t.requires_grad:
            raise RuntimeError(eager_error)  # eager's error for a tensor that does not require grad
        raise UnsupportedError(
            f"{what} inside a jitted function is not supported by thunder.jit{user_location_suffix()}: thunder "
            "differentiates the function as a whole (one autograd node), so the tensors inside it have no node of "
            "their own to keep a gradient or run a hook on. Call it on the jitted function's outputs or inputs "
            "outside it, or jit the code before and after that tensor apart and call it on the tensor between them")

    return refuse


# hooks on the autograd graph: eager's gradient of an intermediate, or its hook's place in the backward, has no
# counterpart in thunder's one node (docs/architecture.md, "Not supported")
_NO_HOOK = "cannot register a hook on a tensor that doesn't require gradient"
for _name, _error in (("retain_grad", "can't retain_grad on Tensor that has requires_grad=False"),
                      ("register_hook", _NO_HOOK), ("register_post_accumulate_grad_hook", _NO_HOOK)):
    tensor_methods[_name] = _refused_autograd_hook(f"Tensor.{_name}()", _error)


def _manual_seed(seed):
    from thunder.core import prims
    from thunder.core.proxies import pyval

    result = torch.manual_seed(pyval(seed))  # now, so random ops traced later draw what eager would
    prims.manual_seed(seed)  # and on every call
    return result


def _get_rng_state():
    """The generator state read when the program runs (a uint8 tensor), not the one seen while tracing."""
    from thunder.core import prims

    return prims.get_rng_state(size=torch.get_rng_state().numel())


def _set_rng_state(state):
    from thunder.core import prims

    if not isinstance(state, TensorProxy):
        raise UnsupportedError(f"torch.set_rng_state() with a state from outside the jitted function"
                               f"{user_location_suffix()}: pass the state in as an argument")
    prims.set_rng_state(state)


# Process-wide switches user code may query (and branch on): the answer becomes a checked input.
_STATE_QUERIES = {f for f in (torch.get_default_dtype, torch.are_deterministic_algorithms_enabled,
                              torch.is_deterministic_algorithms_warn_only_enabled, torch.get_float32_matmul_precision,
                              torch.is_anomaly_enabled, torch.is_anomaly_check_nan_enabled, torch.cuda.is_available,
                              torch.get_num_threads, torch.backends.mps.is_available) if f is not None}


def _state_query(query):
    def ask():
        answer = query()
        get_tracectx().state_reads[query] = answer  # the prologue asks again
        return answer

    return ask


_RNG_STATE = {torch.manual_seed: _manual_seed, torch.random.manual_seed: _manual_seed,
              torch.get_rng_state: _get_rng_state, torch.set_rng_state: _set_rng_state,
              torch.random.get_rng_state: _get_rng_state, torch.random.set_rng_state: _set_rng_state}


def _out_variant(sym):
    """``torch.add(a, b, out=c)``: the symbol, then ``c`` updated in place."""

    def call(*args, **kwargs):
        if "out" in kwargs:
            from thunder.torch.inplace import with_out

            return with_out(sym, args, kwargs)
        return sym(*args, **kwargs)

    return call


_MODULE_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_MODULE_HOOKS = tuple(f"_global{name}" for name in _MODULE_HOOKS)


def _module_call(module_call_wrapped, self_w, *args, records=None, **kwargs):
    """nn.Module.__call__ without hooks is ``self.forward(*args, **kwargs)``; with hooks, interpret the
    implementation that runs them (``_call_impl``: interpreting ``__call__`` itself would come back here).
    ``records``: where to note that the program relied on there being no hooks (registering one later
    retraces)."""
    m = self_w.value
    module_globals = vars(torch.nn.modules.module)
    if any(getattr(m, name) for name in _MODULE_HOOKS) or any(module_globals[name] for name in _GLOBAL_MODULE_HOOKS):
        return call_wrapped(torch.nn.Module._call_impl, self_w, *args, **kwargs)
    if records is not None:
        records.append(InputRecord(Provenance.globals_dict(module_globals), module_globals,
                                   ("empty_items", _GLOBAL_MODULE_HOOKS)))
        if self_w.provenance.is_outside:
            records.append(InputRecord(Provenance.attr(self_w.provenance, "__dict__"), m.__dict__,
                                       ("empty_items", _MODULE_HOOKS)))
    # ``self.forward`` as _call_impl reads it: an instance attribute (a patched forward) wins, and the class's
    # forward is a checked input, so replacing either later retraces
    return call_wrapped(call_wrapped(getattr, self_w, "forward"), *args, **kwargs)


def _jitted_calls() -> dict:
    from thunder.frontend.jit import ThunderFunction
    from thunder.frontend.module import ThunderModule

    # __call__ of what thunder.jit returns -> the attribute holding the original callable
    return {ThunderFunction.__call__: ("fn",), ThunderModule.__call__: ("_modules", "_model")}


_MODULE_CALLS = {torch.nn.Module.__call__, getattr(torch.nn.Module, "_wrapped_call_impl", None)} - {None}


_JITTED_CALLS: dict = {}
_FUNCTION_APPLY = torch.autograd.Function.apply.__func__
_CHECKPOINT = torch.utils.checkpoint.checkpoint
_VMAP_IMPL = getattr(getattr(getattr(torch, "_functorch", None), "vmap", None), "vmap_impl", None)
_LOOPS = {}
for _name in ("map", "scan", "associative_scan", "while_loop"):
    _fn = getattr(torch._higher_order_ops, _name, None)
    if _fn is not None:
        _LOOPS[_unwrapped(_fn)] = f"{_name}_lookaside"


_FUNC_TRANSFORM_ENTRIES: dict = {}


def _func_transform_entries() -> dict:
    if not _FUNC_TRANSFORM_ENTRIES:
        from thunder.frontend.func_transforms import func_transform_entries

        _FUNC_TRANSFORM_ENTRIES.update(func_transform_entries() or {None: None})
    return _FUNC_TRANSFORM_ENTRIES


class SharpEdgeWarning(UserWarning):
    """Outside state was read in a way the prologue does not check (``sharp_edges="warn"``)."""


class SharpEdgeError(UnsupportedError):
    """Outside state was read in a way the prologue does not check (``sharp_edges="error"``)."""


_TYPE_CHECKS = {"tensor", "number", "literal", "is", "type", "class"}  # record checks that fix the exact type
# Native callables whose answer depends on the type of their first argument.
_TYPE_READERS = {isinstance, _isinstance, type, callable}
# Native callables that only look at an object's identity or type, which the prologue does check.
_IDENTITY_READERS = {isinstance, issubclass, type, id, callable, getattr, hasattr}


_UNBOUND_METHODS = (types.MethodDescriptorType, types.WrapperDescriptorType)  # ``list.append`` taken from the class


class JitHooks(Hooks):
    def __init__(self, fn, sharp_edges=None, symbolic: bool = False, checkpoint=None):
        if not _JITTED_CALLS:
            _JITTED_CALLS.update(_jitted_calls())
        self.fn = fn
        self.symbolic = symbolic  # cache="symbolic values": numbers and tensor dims are inputs, not constants
        self.checkpoint = checkpoint  # module -> bool: submodules to run as activation checkpoints
        self.user_lookasides: dict = {}  # callable -> replacement run natively instead (recipes' Lookasides)
        self.sharp_edges = sharp_edges
        self.catches_errors = False  # the user's code has an exception handler: it may catch an op's run-time error
        self._reported: set = set()
        self._type_read_done: set = set()  # provenances whose type the program read (checked once)
        self._identity_checked: set = set()  # provenances of outside objects the program compared with `is`
        self._whole_dicts: set = set()  # provenances of outside dicts native code read whole
        self.records: list[InputRecord] = []
        self.inputs: list = []  # the computation's inputs: tensor proxies, their symbolic dims, number proxies
        self._proxies: dict = {}  # provenance -> TensorProxy
        self._real_of: dict[int, object] = {}  # id(proxy) -> the outside tensor it stands for
        self._state_paths = None  # id(parameter or buffer of the jitted module) -> provenance
        self._first_proxy_of: dict[int, TensorProxy] = {}  # id(real tensor) -> its first proxy
        self.aliases: dict[str, TensorProxy] = {}  # proxy name -> the earlier proxy of the same tensor
        self._container_copies: list = []
        self.outside_containers: dict[int, tuple] = {}  # id -> (object, provenance) of outside lists/dicts/sets
        self._sequences_read: dict[int, tuple] = {}  # id -> (object, provenance) of outside lists and tuples
        # id -> object, for outside objects keeping state in native code (a random generator, a deque, a generator)
        self.outside_stateful: dict[int, object] = {}
        self.side_effects = SideEffects()
        self.autocast = AutocastRegions()  # torch.autocast regions entered by the program
        self.layouts = Layouts()  # strides of the tensors whose strides are known, where the program asks
        self.constant_indices = ConstantIndices()  # eager's index errors where the indices are known constants
        # id -> (list, provenance, contents when first read) of outside lists read only to append to so far
        self._appended_lists: dict[int, tuple] = {}
        # id(proxy) -> (proxy, provenance) of outside tensors whose shape or strides the program changed in place
        # (x.t_()): the proxy stands for the changed tensor, which the epilogue reaches (it is the caller's object)
        self.restrided: dict[int, tuple] = {}
        self.restrided_inputs: set[str] = set()  # names of the computation's inputs changed in place after the call

    # calls ---------------------------------------------------------------------------------------
    def wrapped_lookaside(self, fn):
        if not _hashable(fn):  # no table holds it (pybind11's instancemethod, a callable instance with __eq__)
            return None
        if fn is torch.cond:
            from thunder.frontend.higher_order import cond_lookaside

            return cond_lookaside
        loop = _LOOPS.get(_unwrapped(fn))
        if loop is not None:
            import thunder.frontend.higher_order as higher_order

            return getattr(higher_order, loop)
        if fn is _VMAP_IMPL:
            from thunder.frontend.func_transforms import vmap_impl_lookaside

            return vmap_impl_lookaside
        if _unwrapped(fn) is _unwrapped(_CHECKPOINT):
            from thunder.frontend.higher_order import checkpoint_lookaside

            return checkpoint_lookaside
        if getattr(fn, "__func__", None) is _FUNCTION_APPLY and isinstance(getattr(fn, "__self__", None), type):
            from thunder.frontend.higher_order import autograd_function_lookaside

            return autograd_function_lookaside(fn.__self__)
        attr = _JITTED_CALLS.get(fn)
        if attr is not None:
            # a jitted function or module called from jitted code: its original program is inlined, reached
            # from the jitted object (so its globals and parameters keep their provenance)
            def inline(self_w, *args, **kwargs):
                # self.__dict__[...] read through the interpreter, so the original keeps its provenance
                original = call_wrapped(getattr, self_w, "__dict__")
                for key in attr:
                    original = call_wrapped(dict.get, original, key)
                return call_wrapped(original, *args, **kwargs)

            return inline
        if fn in _MODULE_CALLS:
            return lambda self_w, *args, **kwargs: self._module_call(fn, self_w, *args, **kwargs)
        if type(fn) is _LRU_CACHE_WRAPPER and type(getattr(fn, "__wrapped__", None)) is types.FunctionType:
            return lambda *args, **kwargs: self._cached_function_call(fn, args, kwargs)
        return None

    def _cached_function_call(self, fn, wargs, wkwargs):
        """A ``functools.lru_cache`` function. Called with plain values and returning no tensor (a library's
        ``is_torch_available()``), it runs natively as in eager. A tensor, or a proxy among the arguments, would be
        a value made on an earlier call handed back unchecked (or a proxy in the cache): its body is interpreted
        on every trace instead, its value being what eager's cache returns as long as the body only computes. A
        body writing outside state is then refused: eager runs it once per distinct argument."""
        values = [w.value for w in (*wargs, *wkwargs.values())]
        for v in values:
            hash(self.dict_key(v))  # eager's key: an unhashable argument raises its TypeError
        if not any(isinstance(x, (TensorProxy, NumberProxy)) for x in tree_flatten(values)[0]):
            result = native_call(fn, list(wargs), dict(wkwargs))
            if not any(isinstance(x, torch.Tensor) for x in tree_flatten(result.value)[0]):
                return result
        writes = len(self.side_effects.writes)
        result = call_wrapped(fn.__wrapped__, *wargs, **wkwargs)
        if len(self.side_effects.writes) != writes:
            raise UnsupportedError(
                f"{fn.__wrapped__.__qualname__}, a functools.lru_cache function, writes outside state"
                f"{user_location_suffix()}: eager runs its body once per distinct argument, which the compiled "
                "program cannot tell; call it outside the jitted function, or remove the side effect or the cache")
        return result

    def _module_call(self, module_call_wrapped, self_w, *args, **kwargs):
        check_module_call(self_w.value)
        if self.checkpoint is not None and self_w.value is not self.fn and self.checkpoint(self_w.value):
            from thunder.frontend.higher_order import checkpoint_lookaside

            if kwargs:
                raise UnsupportedError("jit(checkpoint=...): checkpointed submodules are called with positional "
                                       f"arguments only{user_location_suffix()}")
            return checkpoint_lookaside(
                self_w, *args, _trace_with=lambda: _module_call(module_call_wrapped, self_w, *args,
                                                                records=self.records))
        return _module_call(module_call_wrapped, self_w, *args, records=self.records, **kwargs)

    def interpreted_instead(self, fn):
        # torch.compile's wrapper of a function (or of a compiled module's call): thunder compiles the program as a
        # whole, so the function it wraps is interpreted as the program's own code (a value it reads from tensor
        # data splits the program there, as at the top level). Run natively, Dynamo would trace thunder's proxies.
        # (functools.wraps gives the wrapper the user's __module__: its globals are Dynamo's)
        if type(fn) is types.FunctionType and fn.__globals__.get("__name__", "").startswith("torch._dynamo") \
                and not getattr(fn, "_torchdynamo_disable", False) \
                and getattr(fn, "_torchdynamo_orig_callable", None) is not None:
            return "_torchdynamo_orig_callable"
        if (type(fn).__module__, type(fn).__name__) == ("torch._dynamo.eval_frame", "OptimizedModule"):
            return "_orig_mod"  # torch.compile(module): the module it compiles
        return None

    def lookaside(self, fn):
        hashable = _hashable(fn)  # no table holds an unhashable callable
        if self.user_lookasides and hashable:
            replacement = self.user_lookasides.get(fn)
            if replacement is not None:
                return replacement
        engine = engine_lookaside(fn)
        if engine is not None:
            return engine
        if not hashable:
            return None
        mutation = self._mutating_method(fn)
        if mutation is not None:
            return mutation
        if fn is builtins.isinstance:
            return _isinstance
        if fn is builtins.print:
            return self._print
        if fn is warnings.warn:
            return self._warn
        write = self._stream_write(fn)
        if write is not None:
            return write
        if type(fn) is weakref.ReferenceType:
            return lambda: self._module_state_as_proxy(fn())
        if fn in _MATH_ON_NUMBERS:
            return _math_on_numbers(fn)
        if fn is torch._C._set_grad_enabled:
            return _set_grad_enabled
        if fn is torch._C._InferenceMode:
            return _InferenceModeRegion
        autocast = autocast_lookaside(self.autocast, fn)
        if autocast is not None:
            return autocast
        if type(fn) in (types.BuiltinFunctionType, types.FunctionType) and fn in _STATE_QUERIES:
            return _state_query(fn)
        rng = _RNG_STATE.get(_unwrapped(fn))
        if rng is not None:
            return rng
        by_name = _BY_NAME.get((getattr(fn, "__module__", None), getattr(fn, "__name__", None)))
        if by_name is not None:
            return by_name
        refused = _func_transform_entries().get(_unwrapped(fn))
        if refused is not None:
            from thunder.frontend.func_transforms import refused_transform

            return refused_transform(refused)
        found = torch_function_table.get(fn)
        if found is None:
            from thunder.torch.opaque import opaque_lookaside  # torch builtins with no symbol: the opaque fallback

            found = opaque_lookaside(fn)
            if found is not None:
                found = opaque_under_autocast(self.autocast, fn, found)
        elif "inplace" not in getattr(found, "tags", ()):
            return _out_variant(found)
        return found

    def should_interpret(self, fn) -> bool:
        module = getattr(fn, "__module__", None) or ""
        if module.startswith(_NATIVE_MODULES):
            return False
        # thunder's own code (proxies' methods, the torch language) runs natively and records symbols
        return not (module == "thunder" or module.startswith("thunder.")) or fn in _PROGRAM_FUNCTIONS

    # outside values ------------------------------------------------------------------------------
    def on_input(self, value, provenance):
        if provenance.kind == "fn":  # tracing starts: the compiled program will not need the caller's autocast
            self.autocast.begin(get_tracectx())
        pending = self._appended_lists.get(id(value))
        if pending is not None and pending[0] is value and not _loaded_to_append():
            # the list is used for more than appending after all: its contents, as they were, are checked
            del self._appended_lists[id(value)]
            self.records.append(InputRecord(pending[1], pending[2], "literal"))
        if isinstance(value, (TensorProxy, NumberProxy)):
            # only the program puts a proxy into outside state, through whatever path it wrote it (functional_call
            # swaps a module's parameters by a path of its own): reading it back is not an input
            return value
        if self.side_effects.is_written(provenance):
            provenance = self.side_effects.rebased(provenance)
            if provenance is None:
                place = self._place_in_outside_sequence(value) if isinstance(value, torch.Tensor) else None
                if place is not None:  # a tensor the changed list held from the start
                    return self._tensor_input(value, place)
                return value  # the program reads back what it wrote: not an input
        if self._patched_class_entry(provenance):
            return value
        if type(value) is types.CodeType and _in_library(value.co_filename):
            return value  # library code is replaced by reinstalling, not in place
        if provenance.kind in _CLASS_STATE:
            self._class_state(value, provenance)
            return value
        if type(value) in MUTATING_METHODS:
            self.outside_containers.setdefault(id(value), (value, provenance))
        if type(value) in (list, tuple):
            self._sequences_read.setdefault(id(value), (value, provenance))
        self._note_stateful(value)
        if isinstance(value, torch.Tensor):
            unsharded = traced_unsharded(value)
            if unsharded is not None:  # a sharded parameter of the FSDP2 unit being traced: its gathered value
                return unsharded
            if provenance.kind == "deref":  # a weak reference to module state (nn.LSTM's to its flat weights)
                provenance = self._module_state_paths().get(id(value), provenance)
            return self._tensor_input(value, provenance)
        # bools stay constants: two values, and ``flag is True`` must see a bool, not a proxy
        if self.symbolic and type(value) in (int, float):
            proxy = self._proxies.get(provenance)
            if proxy is None:
                name = get_tracectx().make_unique_name(proxy_name_for(provenance, self.fn))
                proxy = proxy_number(value, name)
                self._proxies[provenance] = proxy
                self.inputs.append(proxy)
                self.records.append(InputRecord(provenance, value, "number", proxy))
            return proxy
        if type(value) in (list, tuple, dict) and _holds_tensors(value) and _passed_directly(provenance):
            return self._proxify_container(value, provenance)
        if isinstance(value, _LITERAL_TYPES):
            self.records.append(InputRecord(provenance, value, "literal"))
        elif type(value) is list and _loaded_to_append() and _all_literals(value):
            # ``log.append(n)``: only its type matters, so a program appending to it on every call keeps its entry;
            # a later use of the same list checks its contents as they were now (above)
            self._appended_lists.setdefault(id(value), (value, provenance, list(value)))
            self.records.append(InputRecord(provenance, value, "type"))
        elif type(value) in (list, tuple, torch.Size):  # torch.Size: a size argument, checked like a tuple
            # A container of literals may be used whole (normalized_shape): check its contents. Otherwise its
            # length was baked into unrolled iteration, and the items used are reached on their own.
            # Nested containers of literals count too: an index like ([0, 2], [1, 3]) goes whole to native code.
            self.records.append(InputRecord(provenance, value, "literal" if _all_literals(value) else "len"))
        elif type(value) in (set, frozenset) and _all_literals(value):
            # a set's members are iterated, counted and tested natively: checked whole, by value
            self.records.append(InputRecord(provenance, type(value)(value), "literal"))
        elif provenance.kind == "fn" or type(value) in (dict, set) or _is_bound_method(value):
            # the jitted callable itself; dicts and sets, whose items are reached (or mutated) one by one;
            # bound methods, remade on each read
            self.records.append(InputRecord(provenance, value, None))
        elif isinstance(value, _IDENTITY_TYPES):
            self.records.append(InputRecord(provenance, value, "is"))
        else:
            # any other object (a submodule, a config object): its type decides which methods ran. A dict key
            # (an object used as a key) is one object: which one decides the entry the program used; so is an
            # enum member, which compares by identity (`mode == Mode.TRAIN`)
            one_object = provenance.kind == "key" or isinstance(value, enum.Enum)
            self.records.append(InputRecord(provenance, value, "is" if one_object else "type"))
        return value

    def set_attribute(self, obj, name, value):
        try:
            setattr(obj, name, value)
        except AttributeError:
            if not isinstance(obj, TensorProxy):
                raise
            # eager sets any attribute of a tensor (``x.tag = 1``, ``w.grad = g``); the trace's tensors are
            # values, with no place to keep one
            raise UnsupportedError(
                f"setting {name!r} of a tensor inside the jitted function is not supported yet"
                f"{user_location_suffix()}; keep the value in a variable or an object of your own, or set it outside "
                "the jitted function") from None

    def is_outside_class(self, cls) -> bool:
        return not (getattr(cls, "__module__", "") or "").startswith("thunder.")  # proxies are thunder's

    def _class_state(self, value, provenance):
        """What attribute lookup found on a class (``lookup``) is checked by identity; the receiver's
        class (``type``) by ``type(x) is C``."""
        if provenance.kind == "type" and not self.is_outside_class(value):
            return  # a proxy's class: the value it stands for is checked by its own record
        if provenance.kind == "type":
            self.records.append(InputRecord(provenance.parent, value, "class"))
            return
        self.records.append(InputRecord(provenance, value, "is"))

    def _patched_class_entry(self, provenance) -> bool:
        """Whether ``provenance`` goes through a class entry the program itself set (``C.apply = ...`` in the
        jitted function): what it finds there is its own doing, not an input."""
        p = provenance
        while p.kind in ("attr", "item", "key", "type", "lookup"):
            if p.kind == "lookup":
                name = p.key if type(p.key) is str else p.key[0]
                if any(self.side_effects.wrote_attr(klass, name) for klass in p.parent.root.__mro__):
                    return True
            p = p.parent
        return False

    def _tensor_state_reader(self, tensor, provenance):
        def read(name):
            if name == "item":
                return tensor.item()  # a sample for printing; the number itself is computed at run time
            return self.on_input(getattr(tensor, name), Provenance.attr(provenance, name))

        return read

    def resolve_tensors(self, args, kwargs):
        """Real tensors among a symbol's arguments are module state reached without provenance (e.g. through
        a ModuleList slice built while tracing): they become the proxies of their attribute paths."""
        leaves, spec = tree_flatten((args, kwargs))
        if not any(isinstance(x, torch.Tensor) for x in leaves):
            return args, kwargs
        resolved = []
        for x in leaves:
            if isinstance(x, torch.Tensor):
                provenance = self._module_state_paths().get(id(x))
                if provenance is None:
                    provenance = self._place_in_outside_sequence(x)
                    if provenance is not None:
                        resolved.append(self._tensor_input(x, provenance))
                        continue
                if provenance is None:
                    where = source_location()
                    raise UnsupportedError(
                        f"a tensor that is neither an input nor reachable from one reached a torch operation"
                        f"{f' at {where}' if where else ''} (e.g. created at import time and stored in an object "
                        "the jitted function builds); pass it as an argument or make it a module buffer"
                    )
                x = self.on_input(x, provenance)
            resolved.append(x)
        return tree_unflatten(resolved, spec)

    def on_rebind(self, old, proxy, value, how) -> None:
        """``proxy`` now stands for ``value`` (TraceCtx.rebind): the records of what the program read keep the
        tensor as it was (``old``); an outside tensor is changed the same way after each call."""
        for r in self.records:
            if r.proxy is proxy:
                r.proxy = old
        self.inputs = [old if x is proxy else x for x in self.inputs]
        for table in (self.aliases, self._first_proxy_of):
            for k, v in table.items():
                if v is proxy:
                    table[k] = old
        if id(proxy) in self._real_of:
            self._real_of[id(old)] = self._real_of[id(proxy)]
        self.layouts.rebind(old, proxy, value)
        provenance = next((p for p, q in self._proxies.items() if q is proxy), None)
        if provenance is None:
            return
        if old.name in self.aliases or any(v is old for v in self.aliases.values()):
            raise UnsupportedError(
                f"{how[0]} of a tensor the jitted function reaches by two paths{user_location_suffix()} (passed twice, or "
                "a tied weight) is not supported by thunder yet: pass distinct tensors, or use the out-of-place form")
        from thunder.core.proxies import pyval

        name, args = how
        leaves, spec = tree_flatten(args)  # dims are specialized (checked by the prologue): plain numbers
        args = tree_unflatten([pyval(x) for x in leaves], spec)
        self.side_effects.call_later(provenance, name, args, source_location())
        self.restrided[id(proxy)] = (proxy, provenance)
        self.restrided_inputs.add(old.name)

    def _module_state_as_proxy(self, value):
        """A parameter or buffer of the jitted module reached without provenance (through a weak reference, as
        nn.LSTM checks whether its flat weights changed) is the proxy of its attribute path, so the program sees
        the same object as when it reads the attribute."""
        if isinstance(value, torch.Tensor):
            provenance = self._module_state_paths().get(id(value))
            if provenance is not None:
                return self.on_input(value, provenance)
        return value

    def _module_state_paths(self) -> dict:
        if self._state_paths is None:
            self._state_paths = {}
            if isinstance(self.fn, torch.nn.Module):
                for holder, named in (("_parameters", self.fn.named_parameters(remove_duplicate=False)),
                                      ("_buffers", self.fn.named_buffers(remove_duplicate=False))):
                    for name, t in named:
                        self._state_paths.setdefault(id(t), _state_provenance(name, holder))
        return self._state_paths

    def attribute_value(self, obj, name, value):
        return user_attribute(obj, name, value)

    def dict_key(self, key):
        if isinstance(key, TensorProxy):  # ``state[p]`` with p a proxy of a parameter looks up the parameter itself
            return self._real_of.get(id(key), key)
        if isinstance(key, NumberProxy):  # hashed by its value, as eager's number: a constraint of the trace
            return key._concrete("a set member or dict key")
        return key

    def on_membership(self, wcontainer, key, present: bool, wkey=None) -> None:
        if self.side_effects.is_written(wcontainer.provenance):
            return  # the program reads back what it wrote (o.d = {} ... o.d.get(k)): not an outside value
        if wcontainer.provenance.kind == "globals" and _in_library(wcontainer.value.get("__file__")):
            return  # a library module's globals: nobody defines a ``len`` there later
        if type(wcontainer.value) in (list, tuple) and self._record_check(wcontainer.provenance) == "literal":
            return  # its contents are checked already
        # an outside object as the key (not a number or string, whose value is checked) is re-read by the check
        key_path = None
        if (wkey is not None and wkey.provenance.is_outside and not isinstance(wkey.value, (TensorProxy, NumberProxy))
                and not isinstance(wkey.value, _LITERAL_TYPES)):
            key_path = wkey.provenance
        self.records.append(InputRecord(wcontainer.provenance, wcontainer.value, ("contains", key, present, key_path)))

    def _record_check(self, provenance):
        return next((r.check for r in reversed(self.records) if r.provenance == provenance), None)

    def on_length(self, wcontainer):
        # lists and tuples are checked by length already; a container the program wrote is its own
        if isinstance(wcontainer.value, (dict, set, frozenset)) and not self.side_effects.is_written(
                wcontainer.provenance):
            self.records.append(InputRecord(wcontainer.provenance, wcontainer.value, "len"))

    def keys_are_inputs(self, wcontainer) -> bool:
        original = self.side_effects.original(wcontainer.value)
        if original is None:
            return True
        # The program changed the container before iterating it: it iterates the original keys (checked as one
        # tuple) and its own writes (which the epilogue replays), so positions in the caller's container mean nothing
        keys = tuple(original)
        if not all(type(k) in _CONTAINED_LITERALS for k in keys):
            raise UnsupportedError(
                f"iterating {wcontainer.provenance.to_source()}, a {type(wcontainer.value).__name__} from outside the "
                f"jitted function that it changed before{user_location_suffix()}, whose keys are not strings or "
                "numbers; iterate a copy made before the change, or pass the keys in")
        self.records.append(InputRecord(wcontainer.provenance, keys, "keys"))
        return False

    def on_missing_attribute(self, wobj, name: str) -> None:
        if not self.side_effects.is_written(Provenance.attr(wobj.provenance, name)):
            self.records.append(InputRecord(wobj.provenance, wobj.value, ("hasattr", name, False)))

    def on_catching_code(self, code):
        if not _in_library(code.co_filename):  # libraries' handlers (Module._call_impl's) clean up and re-raise
            self.catches_errors = True

    def on_native_call(self, fn, wargs, wkwargs):
        refuse_native_call(fn, wargs, self.outside_stateful)
        if fn is len and len(wargs) == 1 and wargs[0].provenance.is_outside:
            self.on_length(wargs[0])  # ``if len(state) == 0``
        hashable = _hashable(fn)
        if hashable and fn in _TYPE_READERS and wargs and wargs[0].provenance.is_outside:
            self._type_read(wargs[0])
        if (hashable and fn in _IDENTITY_READERS) or fn is len:
            return
        for w in (*wargs, *wkwargs.values()):
            wdict = w.items.wdict if isinstance(w.items, ViewSource) else w
            if type(wdict.value) is dict and wdict.provenance.is_outside:
                self._whole_dict(wdict)
        if self.sharp_edges in (None, "allow"):
            return
        seen = [(w.value, w.provenance) for w in (*wargs, *wkwargs.values()) if w.provenance.is_outside]
        owner = getattr(fn, "__self__", None)
        if owner is not None and not isinstance(owner, types.ModuleType):
            record = self._record_of(owner)
            if record is not None:
                seen.append((owner, record.provenance))
        for value, provenance in seen:
            record = self._record_of(value)
            if record is not None and not _contents_checked(value, record) and provenance not in self._whole_dicts:
                self._report(fn, value, provenance)

    def _whole_dict(self, wdict) -> None:
        """An outside dict (or a view of it) goes whole to native code (``sorted(d)``, ``max(d.values())``,
        ``dict(d)``): its length and every item are inputs, so the same keys with the same values are what
        the cached program saw. Only dicts of Python literals: other values are inputs where they are read."""
        d = wdict.value
        if wdict.provenance in self._whole_dicts or not _all_literals(d.values()):
            return
        self._whole_dicts.add(wdict.provenance)
        self.on_length(wdict)
        for key, value in d.items():
            self.on_input(value, Provenance.item(wdict.provenance, key))

    def _checked_provenance(self, w):
        """Where the outside value ``w`` is read from on every call; None for what the program itself stored
        (a buffer it rebound), which the prologue does not check."""
        if not self.side_effects.is_written(w.provenance):
            return w.provenance
        return self.side_effects.rebased(w.provenance)

    def on_identity(self, wleft, wright):
        for w in (wleft, wright):
            if not w.provenance.is_outside or isinstance(w.value, (TensorProxy, NumberProxy)):
                continue  # tensors the same by two paths are aliases, which the prologue checks apart
            provenance = self._checked_provenance(w)
            if provenance is not None and provenance not in self._identity_checked:
                self._identity_checked.add(provenance)
                self.records.append(InputRecord(provenance, w.value, "is"))

    def _type_read(self, w) -> None:
        """The program branched on the type of an outside value (``isinstance``, a ``match`` pattern): check
        the type where the value's own check does not (dicts, sets, lists checked by length)."""
        provenance = self._checked_provenance(w)
        if provenance is None:
            return
        if provenance in self._type_read_done:
            return
        self._type_read_done.add(provenance)
        checks = {r.check for r in self.records if r.provenance == provenance and type(r.check) is not tuple}
        if not checks & _TYPE_CHECKS:
            self.records.append(InputRecord(provenance, w.value, "type"))

    def _record_of(self, value):
        for r in reversed(self.records):
            if r.value is value:
                return r
        return None

    def _report(self, fn, value, provenance):
        where = source_location()
        key = (where, provenance)
        if key in self._reported:
            return
        self._reported.add(key)
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
        message = (
            f"sharp edge{f' at {where}' if where else ''}: {name}() runs natively on {provenance.to_source()}, a "
            f"{type(value).__name__} from outside the jitted function whose contents the prologue does not check, so a "
            "later change to it would not be seen; pass what it computes as an argument, or use sharp_edges='allow'"
        )
        if self.sharp_edges == "error":
            raise SharpEdgeError(message)
        import warnings

        warnings.warn(message, SharpEdgeWarning, stacklevel=2)

    def _tensor_input(self, value, provenance) -> TensorProxy:
        check_tensor_input(value)
        # One proxy per access path: the same tensor reached by two paths (a tied weight, an argument passed
        # twice) is two inputs, each re-read and checked on every call, so neither can go stale.
        proxy = self._proxies.get(provenance)
        if proxy is None:
            trace = get_tracectx()
            name = trace.make_unique_name(proxy_name_for(provenance, self.fn))
            proxy = tensor_proxy(value, name)
            if self.symbolic and not _is_module_state(provenance):
                # dimensions are inputs too (module parameters and buffers keep static shapes)
                proxy.shape = tuple(IntegerProxy(trace.make_name("s"), value=d) for d in value.shape)
            proxy.outside = self._tensor_state_reader(value, provenance)
            self.layouts.add_input(proxy, value)
            self._proxies[provenance] = proxy
            self._real_of[id(proxy)] = value
            first = self._first_proxy_of.setdefault(id(value), proxy)
            if first is not proxy:  # the same tensor again, by another path: an alias of that input
                self.aliases[proxy.name] = first
            self.inputs.append(proxy)
            self.inputs.extend(d for d in proxy.shape if isinstance(d, NumberProxy))
            self.records.append(InputRecord(provenance, value, "tensor", proxy))
        return proxy

    def _place_in_outside_sequence(self, tensor):
        """Where an outside list or tuple the program read held ``tensor`` when the call began (the prologue reads
        it there), or None. A torch call given the whole container (``torch.stack(self.history)``) sees its
        tensors, not the items the interpreter reads one by one; after the program changed the list
        (``self.history.append(h)``), reading an item back gives what is there, which is an input where the
        list held it from the start."""
        places = [Provenance.item(provenance, i) for container, provenance in self._sequences_read.values()
                  for i, item in enumerate(_original(self.side_effects, container)) if item is tensor]
        return places[0] if len(places) == 1 else None  # held twice: which place a later call reads is not known

    def _proxify_container(self, value, provenance):
        """A copy whose tensors are proxies (a native call such as torch.stack(list_of_tensors) sees the
        container itself, not its items one by one). Lists and dicts are copies, so mutating them would
        not reach the caller's object: ``check_containers_unchanged`` refuses that after tracing."""
        self.records.append(InputRecord(provenance, value, "len"))
        if type(value) is dict:
            copy = {k: self.on_input(v, Provenance.item(provenance, k)) for k, v in value.items()}
        else:
            items = [self.on_input(v, Provenance.item(provenance, i)) for i, v in enumerate(value)]
            copy = tuple(items) if type(value) is tuple else items
        if type(value) is not tuple:
            self._container_copies.append((copy, list(copy.items()) if type(copy) is dict else list(copy), provenance))
        return copy

    def check_containers_unchanged(self) -> None:
        for copy, snapshot, provenance in self._container_copies:
            now = list(copy.items()) if type(copy) is dict else list(copy)
            if len(now) != len(snapshot) or any(a is not b and a != b for a, b in zip(now, snapshot)):
                raise UnsupportedError(
                    f"the jitted function mutated the {type(copy).__name__} {provenance.to_source()} it received from "
                    "outside; mutating outside containers is not supported yet: build and return a new one instead"
                )

    def on_store(self, kind, target, key, value):
        from thunder.interpreter.runtime import current_runtime

        globals_dict = current_runtime().frames[-1].globals if kind.endswith("global") else None
        self.side_effects.store(kind, target, key, value, globals_dict, source_location())

    def _print(self, *args, **kwargs):
        """``print`` prints on every call, as in eager (the epilogue prints what the program printed, tensors with
        their values); arguments the epilogue cannot hand over (objects the program made) are printed now, once."""
        leaves = tree_flatten((args, kwargs))[0]
        # an outside object (file=sys.stderr) is reached again by the epilogue
        if all(isinstance(v, (TensorProxy, NumberProxy, torch.Size, SymbolicSize)) or type(v) in _LITERAL_TYPES
               or self._record_of(v) is not None for v in leaves):
            self.side_effects.call_function(builtins.print, args, kwargs, source_location())
            return None
        return print(*args, **kwargs)

    def _warn(self, message, category=None, stacklevel=1, source=None, **kwargs):
        """``warnings.warn``: warned by the epilogue on every call, from the line eager would name (``stacklevel``
        counted in the interpreted frames), so the filters and the once-per-line registry decide as in eager."""
        if isinstance(message, Warning):
            category, message = type(message), str(message)
        from thunder.interpreter.runtime import current_runtime

        frames = current_runtime().frames
        frame = frames[max(len(frames) - max(int(stacklevel), 1), 0)]
        where = frame.source_location()
        args = (str(message), category or UserWarning, where.filename, where.lineno,
                frame.globals.get("__name__", "<string>"))
        self.side_effects.call_function(warn_at, args, {}, source_location())

    def _stream_write(self, fn):
        """``stream.write(text)`` (``sys.stdout``, a log handler's stream) on an outside stream: written by the
        epilogue on every call, as ``print``; a stream the program made is written now."""
        name = getattr(fn, "__name__", None)
        if name not in ("write", "writelines", "flush"):
            return None
        stream = getattr(fn, "__self__", None)
        if isinstance(stream, io.IOBase):  # a bound method
            return self._deferred_write(stream, name) if self._record_of(stream) is not None else None
        owner = getattr(fn, "__objclass__", None)  # the method looked up on the class, the stream comes first
        if not (isinstance(owner, type) and issubclass(owner, io.IOBase)):
            return None

        def unbound(stream, *args):
            if self._record_of(stream) is None:
                return fn(stream, *args)
            return self._deferred_write(stream, name)(*args)

        return unbound

    def _deferred_write(self, stream, name: str):
        method = getattr(type(stream), name)

        def deferred(*args):
            self.side_effects.call_function(method, (stream, *args), {}, source_location())
            return len(args[0]) if name == "write" else None

        return deferred

    def _note_stateful(self, value) -> None:
        """An outside object whose native methods would change hidden state, or a bound method of one
        (``random.random``): its native calls are refused (frontend/native_state.py)."""
        if type(value) in (types.BuiltinMethodType, types.MethodWrapperType):
            value = value.__self__  # a builtin function's is its module, which is not stateful
        if stateful_object(value) is not None:
            self.outside_stateful[id(value)] = value

    def _mutating_method(self, fn):
        """``lst.append`` (a bound builtin method) of a list/dict/set that came from outside, or ``list.append``
        called with the list first."""
        if type(fn) in (types.BuiltinMethodType, types.MethodWrapperType):
            return self._container_call(fn.__self__, fn.__name__)
        owner = getattr(fn, "__objclass__", None)
        if type(fn) not in _UNBOUND_METHODS or fn.__name__ not in CHANGING_METHODS.get(owner, ()):
            return None

        def unbound(obj, *args, **kwargs):
            call = self._container_call(obj, fn.__name__) if type(obj) is owner else None
            return fn(obj, *args, **kwargs) if call is None else call(*args, **kwargs)

        return unbound

    def _container_call(self, obj, name: str):
        tp = type(obj)
        if tp not in MUTATING_METHODS:
            return None
        provenance = self.outside_containers.get(id(obj))
        if provenance is None or provenance[0] is not obj:
            return None
        where = source_location()
        refuse_value_returning_mutation(tp, name, f" (at {where})" if where else "")
        if name in READING_MUTATIONS.get(tp, ()):
            return lambda *args: self._reading_mutation(obj, provenance[1], name, args)
        if name not in MUTATING_METHODS[tp]:
            return None

        def call(*args, **kwargs):
            if kwargs and not (tp is dict and name == "update"):
                return getattr(obj, name)(*args, **kwargs)  # CPython's TypeError: no other takes keywords
            result = self.side_effects.call_method(obj, provenance[1], name, args, source_location())
            if kwargs:  # ``d.update(other, k=v)`` is ``d.update(other)`` then ``d.update({"k": v})``
                self.side_effects.call_method(obj, provenance[1], name, (kwargs,), source_location())
            return result

        return call

    def _reading_mutation(self, obj, provenance, name: str, args: tuple):
        """``lst.pop(i)``, ``d.pop(k, default)``, ``d.setdefault(k, default)`` on an outside container: what it
        returns is read first, as the program reading ``lst[i]`` / ``d[k]`` (an outside value, checked by the
        prologue; or the absence of ``k``), then the call is done now and replayed by the epilogue."""
        found = False
        if type(obj) is list:
            index = args[0] if args else -1
            if isinstance(index, int) and -len(obj) <= index < len(obj):
                key, found = index % len(obj), True
        elif args:
            key = self.dict_key(args[0])
            found = key in obj
            if not found and not self.side_effects.is_written(provenance):
                self.records.append(InputRecord(provenance, obj, ("contains", key, False, None)))
        value = self.on_input(obj[key], Provenance.item(provenance, key)) if found else None
        result = self.side_effects.call_method(obj, provenance, name, args, source_location())  # eager's error
        return value if found else result
