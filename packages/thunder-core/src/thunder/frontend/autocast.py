"""``torch.autocast`` inside and around jitted functions.

Autocast becomes explicit casts in the trace (see ``thunder/torch/autocast.py`` for which ops and how). Here
is where the autocast state comes from while tracing:
- *around* the jitted call, the caller's state (``torch.is_autocast_enabled(device_type)``,
  ``torch.get_autocast_dtype(device_type)``), which tracing never changes; the prologue checks it
  (``prims.check_autocast``), so a call under another autocast state selects or makes another cache entry;
- *inside* the jitted function, the ``torch.autocast`` regions the program is in (context manager, decorator,
  nested, ``enabled=False``), tracked by lookasides on ``autocast.__enter__``/``__exit__``. The real state is not
  touched: the regions only decide which casts are recorded, and the compiled program needs no autocast.

Calls the program makes itself (not those inside a symbol's decomposition) of a symbol with an autocast policy
get their arguments cast (``thunder.core.symbol.call_rewrites``). Changing the autocast state any other way
(``torch.set_autocast_enabled``, ...) inside a jitted function is refused with an error naming the call.
"""

from __future__ import annotations

import contextlib

import torch

from thunder.core import dtypes, prims
from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.proxies import NumberProxy, TensorProxy
from thunder.core.pytree import tree_flatten, tree_map
from thunder.core.symbol import call_rewrites
from thunder.torch.autocast import DEVICE_TYPES, POLICY_IDS, autocast_arguments

__all__ = ["AutocastRegions", "autocast_lookaside", "check_autocast_state", "opaque_under_autocast",
           "refuse_under_autocast"]

_AUTOCAST = torch.amp.autocast_mode.autocast


class AutocastRegions:
    """The ``torch.autocast`` regions the traced program is inside of, innermost last."""

    def __init__(self):
        self.stack: list = []  # (the autocast object, device type, enabled, dtype)

    def states(self) -> dict:
        """device type -> (enabled, torch dtype): the caller's state, then each region in order."""
        states = {d: (torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in DEVICE_TYPES}
        for _, device, enabled, dtype in self.stack:
            states[device] = (enabled, dtype)
        return states

    def enabled(self) -> dict:
        """device type -> thunder dtype, for the autocasts in effect."""
        return {d: dtypes.to_dtype(dtype) for d, (enabled, dtype) in self.states().items() if enabled}

    @contextlib.contextmanager
    def in_effect(self):
        """Torch's own state set to the traced one for a native call that reads it (autocast's constructor
        takes the current dtype as its default; ``torch.is_autocast_enabled()`` asked by the program)."""
        if not self.stack:
            yield
            return
        saved = {d: (torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in DEVICE_TYPES}
        try:
            for d, (enabled, dtype) in self.states().items():
                torch.set_autocast_enabled(d, enabled)
                torch.set_autocast_dtype(d, dtype)
            yield
        finally:
            for d, (enabled, dtype) in saved.items():
                torch.set_autocast_enabled(d, enabled)
                torch.set_autocast_dtype(d, dtype)

    def begin(self, trace) -> None:
        """The compiled program runs with the caller's autocast switched off: its casts are explicit, and PyTorch
        must not cast again what the trace runs in float32 (an ``enabled=False`` region inside, an op PyTorch
        would cast that the trace records as traced)."""
        for d in DEVICE_TYPES:
            decorator = f"@torch.autocast({d!r}, enabled=False)"
            if torch.is_autocast_enabled(d) and decorator not in trace.decorators:
                trace.decorators.append(decorator)

    # the lookasides --------------------------------------------------------------------------------
    def construct(self, cls, *args, **kwargs):
        with self.in_effect():
            return cls(*args, **kwargs)

    def enter(self, mode):
        if mode._enabled and mode.device not in DEVICE_TYPES:
            raise UnsupportedError(f"torch.autocast(device_type={mode.device!r}) inside a jitted function"
                                   f"{user_location_suffix()}: thunder reproduces autocast for "
                                   f"{' and '.join(map(repr, DEVICE_TYPES))} only")
        self.stack.append((mode, mode.device, bool(mode._enabled), mode.fast_dtype))
        return mode

    def exit(self, mode, *exc_info):
        if not self.stack or self.stack[-1][0] is not mode:
            raise UnsupportedError(f"a torch.autocast region exited out of order{user_location_suffix()}: thunder "
                                   "supports autocast regions that nest (with-statements, decorators)")
        self.stack.pop()
        return False

    def query(self, fn):
        def call(*args, **kwargs):
            with self.in_effect():
                return fn(*args, **kwargs)

        return call


def _refuse(name: str):
    def refuse(*args, **kwargs):
        raise UnsupportedError(f"{name}() inside a jitted function{user_location_suffix()}: thunder follows autocast "
                               "through torch.autocast regions only; use `with torch.autocast(...)` or "
                               "@torch.autocast(...) instead")

    return refuse


def _torch_functions(names) -> list:
    return [(n, getattr(torch, n)) for n in names if hasattr(torch, n)]


# torch functions that read the autocast state: answered with the traced state (baked into the program; the
# prologue checks the caller's part of it)
_QUERIES = {fn for _, fn in _torch_functions(("is_autocast_enabled", "get_autocast_dtype", "is_autocast_cpu_enabled",
                                              "get_autocast_cpu_dtype", "get_autocast_gpu_dtype"))}
_QUERIES.add(torch._C._is_any_autocast_enabled)
# ... and that change it outside of a region: refused
_SETTERS = dict(_torch_functions(("set_autocast_enabled", "set_autocast_dtype", "set_autocast_cpu_enabled",
                                  "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "autocast_increment_nesting",
                                  "autocast_decrement_nesting")))
_SETTERS = {fn: _refuse(f"torch.{name}") for name, fn in _SETTERS.items()}
# the cast cache is an eager optimization; traces have no use for it
_NO_OPS = {fn for _, fn in _torch_functions(("set_autocast_cache_enabled", "clear_autocast_cache"))}


def autocast_lookaside(regions: AutocastRegions, fn):
    """The jit's replacement for ``fn`` when it is part of autocast's machinery, else None."""
    if fn is _AUTOCAST.__enter__:
        return regions.enter
    if fn is _AUTOCAST.__exit__:
        return regions.exit
    if isinstance(fn, type) and issubclass(fn, _AUTOCAST):
        return lambda *args, **kwargs: regions.construct(fn, *args, **kwargs)
    try:
        if fn in _QUERIES:
            return regions.query(fn)
        if fn in _NO_OPS:
            return lambda *args, **kwargs: None
        return _SETTERS.get(fn)
    except TypeError:  # unhashable callables
        return None


def _current_regions() -> AutocastRegions | None:
    from thunder.interpreter.runtime import current_runtime

    rt = current_runtime()
    return getattr(rt.hooks, "autocast", None) if rt is not None else None


def _cast_arguments(sym, args, kwargs):
    regions = _current_regions()
    if regions is None:
        return args, kwargs
    state = regions.enabled()
    return autocast_arguments(sym, args, kwargs, state) if state else (args, kwargs)


call_rewrites.update(dict.fromkeys(POLICY_IDS, _cast_arguments))


def refuse_under_autocast(construct: str) -> None:
    """Constructs that run as one PyTorch call of the user's code (an autograd.Function, a checkpoint) would run
    it without autocast (the compiled program runs with autocast off, its casts being explicit): refused."""
    regions = _current_regions()
    if regions is not None and regions.enabled():
        raise UnsupportedError(f"{construct} under torch.autocast{user_location_suffix()}: it runs as one PyTorch "
                               "call, which thunder does not run under the traced autocast state yet; call it "
                               "outside the autocast region (or put the region inside the function it calls)")


def opaque_under_autocast(regions: AutocastRegions, fn, lookaside):
    """``lookaside`` of an opaque torch call (one PyTorch call, which the compiled program runs with autocast off
    like everything else), refused where an autocast in effect would give eager's call outputs of other dtypes
    (``F.multi_head_attention_forward``, whose inner matmuls autocast casts): asked of PyTorch itself, by running
    ``fn`` on fake tensors under the traced autocast state."""

    def call(*args, **kwargs):
        result = lookaside(*args, **kwargs)
        if not regions.enabled():
            return result
        leaves, _ = tree_flatten((args, kwargs))
        if not any(isinstance(x, TensorProxy) for x in leaves):
            return result
        traced = [x.dtype for x in tree_flatten(result)[0] if isinstance(x, TensorProxy)]
        eager = _dtypes_under_autocast(regions, fn, args, kwargs)
        if eager is not None and eager != traced:
            names = ", ".join(str(dtypes.to_torch_dtype(d)) for d in eager)
            raise UnsupportedError(
                f"{getattr(fn, '__qualname__', fn)} under torch.autocast{user_location_suffix()}: it runs as one "
                f"PyTorch call, which thunder does not run under the traced autocast state yet, and autocast gives its "
                f"outputs other dtypes in eager ({names}); call it outside the autocast region, or cast its inputs "
                "to the dtype you want")
        return result

    return call


def _dtypes_under_autocast(regions: AutocastRegions, fn, args, kwargs) -> list | None:
    """The thunder dtypes of ``fn``'s tensor outputs in eager under the traced autocast state, or None where the fake
    run cannot tell."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from thunder.core.devices import to_torch_device
    from thunder.core.proxies import pyval

    try:
        with FakeTensorMode():
            def fake(x):
                if isinstance(x, TensorProxy):
                    t = torch.empty([int(pyval(d)) for d in x.shape], dtype=dtypes.to_torch_dtype(x.dtype),
                                    device=to_torch_device(x.device))
                    return t.requires_grad_(x.requires_grad) if t.is_floating_point() else t
                return pyval(x) if isinstance(x, NumberProxy) else x

            fake_args, fake_kwargs = tree_map(fake, (args, kwargs))
            with regions.in_effect():
                out = fn(*fake_args, **fake_kwargs)
            return [dtypes.to_dtype(t.dtype) for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
    except Exception:
        return None


# the prologue ------------------------------------------------------------------------------------------
def _check_autocast_meta(states):
    return None


prims.make_prim("check_autocast", _check_autocast_meta, tags=("prologue",))


def check_autocast_state() -> None:
    """Records in the prologue being built the caller's autocast state the trace was made under (tracing does
    not change it, so it is still the state now)."""
    states = tuple((d, torch.get_autocast_dtype(d) if torch.is_autocast_enabled(d) else None) for d in DEVICE_TYPES)
    prims.check_autocast(states)
