"""Reading Python values from tensor data while a program is traced (``trace.value_reader``).

A read (``bool(t)``, ``int(t)``, ``t.tolist()``, control flow on ``t.item()``, the output size of ``nonzero``)
runs the part recorded since the last read on the call's real inputs (a *probe*, without autograd, on copies of
what it updates, the random generator put back after tracing), hands the value to the interpreter, and records
a ``segment_end`` marker carrying the read value and every tensor or number the program can still reach.
``frontend/segments.py`` cuts the trace at the markers; docs/values-from-tensor-data.md tells the whole story.
"""

from __future__ import annotations

import contextlib
import operator
import types

import torch

from thunder.core import prims
from thunder.core.errors import ReadInsideRegionError, UnsupportedError, user_location_suffix
from thunder.core.proxies import VALUE_READ_DESCRIPTIONS, IntegerProxy, NumberProxy, Proxy, TensorProxy
from thunder.core.pytree import tree_flatten
from thunder.core.symbol import Symbol
from thunder.core.trace import _current_trace, from_trace
from thunder.frontend.constant_reads import constant_closure, constant_value

__all__ = ["ValueReader", "Read", "segment_end", "uses", "freeze", "CONVERSIONS", "ANY_SIZE"]


def _segment_end_meta(value, *live):
    return None


# Where a segment ends: the read value first, then what the rest of the program may use. Kept by dead-code
# elimination (a side effect) and renamed by functionalization like any read; CSE merges nothing across it (a
# continuation traced later must not need a value the segments before it did not keep).
segment_end = Symbol("segment_end", _segment_end_meta, id="segment_end", is_prim=True,
                     module="thunder.frontend.segments", tags=("side_effect", "cse_barrier"))

# how a read turns the segment's first output into the Python value the program sees (eager's conversions)
CONVERSIONS = {
    "__bool__": bool,
    "__int__": int,
    "__float__": float,
    "__index__": operator.index,
    "tolist": lambda t: t.tolist(),
    "text": repr,  # str(t) is repr(t) for a tensor
    "number": lambda n: n,
    "size": int,
}


def freeze(value):
    """A hashable key for a read value (``tolist`` gives nested lists); NaN keys by its text, as NaN != NaN."""
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    if isinstance(value, float) and value != value:
        return "nan"
    return value


# the key under which the continuations of a size read are kept with their guards (checks of its constraints)
ANY_SIZE = object()


class Read:
    """One split: how the value is converted, the value seen while tracing, and the user's line. ``guard``: for a
    size the rest of the program used symbolically, ``guard(size) -> bool`` checks the constraints recorded on
    it (the continuation serves every size passing them); None: the continuation holds for this value only."""

    __slots__ = ("kind", "value", "location", "what", "guard")

    def __init__(self, kind, value, location, what):
        self.kind, self.value, self.location, self.what = kind, value, location, what
        self.guard = None

    @property
    def key(self):
        return freeze(self.value) if self.guard is None else ANY_SIZE


@contextlib.contextmanager
def _outside_tracing():
    token = _current_trace.set(None)
    try:
        yield
    finally:
        _current_trace.reset(token)


def uses(bsyms, tail) -> dict:
    """name -> proxy of what ``bsyms`` (then ``tail``, the marker's arguments or the output) read and do not
    define themselves, symbolic sizes of those tensors included, in order of first use."""
    defined, used = set(), {}

    def use(p):
        if isinstance(p, (TensorProxy, NumberProxy)) and p.name not in defined:
            used.setdefault(p.name, p)
            if isinstance(p, TensorProxy):
                for d in p.shape:
                    if isinstance(d, NumberProxy):
                        used.setdefault(d.name, d)

    for bsym in bsyms:
        # sizes its decomposition computes (cat's 2 * s0) are defined where the symbol runs, from numbers that may
        # come from an earlier segment (a reshape's ``s0 * i2``, ``i2`` a size of a view made before the split)
        for d in bsym.number_definitions():
            for p in d.flat_proxy_args:
                use(p)
            defined.update(o.name for o in d.flat_proxy_outs)
        for p in bsym.flat_proxy_args:
            use(p)
        defined.update(o.name for o in bsym.flat_proxy_outs)
    for p in tail:
        if isinstance(p, Proxy):
            use(p)
    return used




def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


# how Symbol.__call__ names a number computed from tensor data given to an op (core/symbol.py)
_AN_ARGUMENT = "an argument of "


def _vmap_error(message):
    return lambda what: RuntimeError(message)


# eager's errors for a value read from a batched tensor (torch/csrc/functorch): the conversions to a number call
# .item(); a tensor's text has no eager meaning to match under thunder's per-sample tracing: refused
_VMAP_ITEM = _vmap_error(
    "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a Tensor, "
    "please try to rewrite what you're doing with other operations. If error is occurring somewhere inside PyTorch "
    "internals, please file a bug report.")
_VMAP_READ_ERRORS = {
    "__bool__": _vmap_error(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't support "
        "that yet, please file an issue at https://github.com/pytorch/pytorch/issues ."),
    "tolist": _vmap_error("Cannot access data pointer of Tensor that doesn't have storage"),
    "text": lambda what: UnsupportedError(
        f"{what} inside a function vmap runs{user_location_suffix()} is not supported by thunder.jit: eager formats "
        "the batched tensor; format it outside the vmapped function"),
}


class ValueReader:
    """Reads values from tensor data while the program is traced (``trace.value_reader``).

    known: the values of the first reads, when a continuation is traced for them (those segments already ran);
    env: name -> real value of what already ran (the call's inputs and the outputs of earlier segments).
    """

    def __init__(self, trace, hooks, executors, known=(), env=None):
        self.trace, self.hooks, self.executors = trace, hooks, executors
        self.known = list(known)
        self.env = dict(env or {})
        self.owned: set[str] = set()  # names whose value in env is the probes' own copy (theirs to update)
        self.evaluated = 0  # bound symbols of the trace already run by probes
        self.reads: list[Read] = []
        self._rng = None
        # inside the function vmap runs once per sample (frontend/func_transforms.py): eager's vmap refuses reads
        self.vmapped = 0

    # what the program calls -----------------------------------------------------------------------------------
    def read_tensor(self, proxy: TensorProxy, kind: str):
        return self._read(proxy, kind, f"{VALUE_READ_DESCRIPTIONS[kind]} of a tensor")

    def read_number(self, proxy: NumberProxy, what: str):
        if self.hooks.symbolic and isinstance(proxy, IntegerProxy) and what.startswith(_AN_ARGUMENT):
            # cache="symbolic values": an integer read from tensor data that only flows into an op (a size, a slice
            # bound, an operand) stays a symbolic number, as a data-dependent size does (``read_size``)
            return self._read_symbolic(proxy, f"{what} of {proxy.name}")
        return self._read(proxy, "number", f"{what} of {proxy.name}")

    def read_size(self, count: TensorProxy, what: str) -> NumberProxy:
        """The size an op's output will have, counted by the 0-d tensor ``count``: read here, but a symbolic
        number for the rest of the program, so one continuation serves every size the program does not branch on
        (its constraints decide, see ``size_read_guards``)."""
        self._check_top_level(what)
        if self.vmapped:
            op = {"unique": "_unique2"}.get(what.rsplit(" ", 1)[-1], what.rsplit(" ", 1)[-1])
            raise RuntimeError("vmap: We do not support batching operators that can output dynamic shape. Attempted "
                               f"to vmap over aten::{op}. Please file an issue at "
                               "https://github.com/pytorch/pytorch/issues if you need this feature.")
        return self._read_symbolic(prims.item(count), what)  # recorded at the top level: the segment hands it over

    def _read_symbolic(self, size: IntegerProxy, what: str):
        """``size``, a number computed from tensor data, read here and a symbolic number afterwards."""
        size.value = self._read(size, "size", what)
        size.data_dependent = False
        if size.value in (0, 1):
            # specialized, as PyTorch's symbolic shapes do: empty and broadcastable dims take other paths in
            # the ops after (a softmax over no element), so their continuations are kept for the value itself
            self.reads[-1].kind = "number"
            return size.value
        return size

    def _check_top_level(self, what):
        if len(self.trace.scopes) > 1:
            raise ReadInsideRegionError(
                f"{what} needs a value computed from tensor data inside a region thunder traces as one operation "
                f"(a checkpoint, an autograd.Function, a torch operation's decomposition)"
                f"{user_location_suffix()}: the program can only be split between operations; read the value before "
                "the region and pass it in, or keep it a tensor (torch.where)"
            )

    def known_at_trace_time(self, proxy) -> bool:
        """Whether ``proxy`` is computed from constants alone (frontend/constant_reads.py): reading it splits
        nothing."""
        return constant_closure(self.trace, proxy) is not None

    def _read(self, proxy, kind, what):
        trace = self.trace
        # the same value on every call: no split, no check (a size read is handed on as a symbolic number instead)
        closure = constant_closure(trace, proxy) if kind != "size" else None
        if closure is not None:
            return CONVERSIONS[kind](constant_value(trace, proxy, self.executors, closure))
        self._check_top_level(what)
        if self.vmapped and kind != "size":
            raise _VMAP_READ_ERRORS.get(kind, _VMAP_ITEM)(what)
        index = len(self.reads)
        if index < len(self.known):
            value = self.known[index]  # this segment already ran in the call being continued
            self.evaluated = len(trace.bound_symbols)
        else:
            self._save_rng()
            self._run_pending()
            value = CONVERSIONS[kind](self._value(proxy))
        live = self._live_proxies(exclude=proxy)
        trace.bound_symbols.append(segment_end.bind(proxy, *live, output=None, source=trace.current_location()))
        self.evaluated = len(trace.bound_symbols)
        self.reads.append(Read(kind, value, trace.current_location(), what))
        return value

    # probes: running what was recorded, to know the value -----------------------------------------------------
    def _value(self, proxy):
        name = proxy.name
        if name in self.env:
            return self.env[name]
        for record in self.hooks.records:
            if record.proxy is not None and record.proxy.name == name:
                self.env[name] = record.value
                return record.value
        if isinstance(proxy, NumberProxy) and not proxy.data_dependent:
            return proxy.value  # a symbolic number input: its value in this call
        raise UnsupportedError(f"internal error: the value of {name} is not known where the program is split; "
                               "please file an issue")

    def _run_pending(self):
        from thunder.transforms.pipeline import run_pipeline

        bsyms = [b for b in self.trace.bound_symbols[self.evaluated:] if b.sym is not segment_end]
        self.evaluated = len(self.trace.bound_symbols)
        if not bsyms:
            return
        free = uses(bsyms, ())  # symbolic sizes of the tensors read included: decompositions compute with them
        defined = {p.name: p for bsym in bsyms for p in bsym.flat_proxy_outs}
        probe = from_trace(self.trace)
        probe.fn_name = "probe"
        probe.args = list(free.values())
        probe.bound_symbols = bsyms
        probe.output = tuple(p for p in defined.values() if isinstance(p, (TensorProxy, NumberProxy)))
        with _outside_tracing():
            traces = run_pipeline(probe, self.executors, check_inplace=False)
            final = traces[-1]
            # the inputs it writes, as the functional trace names them (copy_to_out_(x, out=input)): an executor
            # may lower a write to an in-place method without out= (a KV-cache store, executors/torch_stores.py)
            for p in (b for t in traces for b in t.bound_symbols):
                out = p.kwargs.get("out")
                if isinstance(out, Proxy) and out.name in free and out.name not in self.owned:
                    value = self._value(out)
                    if isinstance(value, torch.Tensor):  # the probe updates a copy, never the caller's tensor
                        self.env[out.name] = value.detach().clone()
                    self.owned.add(out.name)
            args = [self._value(p) for p in probe.args]
            with torch.no_grad():
                values = final.python_callable()(*args)
        # an output that is a view of the caller's tensor (``x[-1]``) is not the probes' own: a later probe that
        # writes into it writes into a copy
        callers = {_storage(v) for n, v in self.env.items() if n not in self.owned and isinstance(v, torch.Tensor)}
        self.env.update(zip((p.name for p in probe.output), values))
        self.owned.update(p.name for p, v in zip(probe.output, values)
                          if not (isinstance(v, torch.Tensor) and _storage(v) in callers))

    def _save_rng(self):
        # probes draw random numbers the real run must draw again: the generator is put back after tracing
        if self._rng is None:
            self._rng = (torch.get_rng_state(),
                         torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None)

    def finish(self):
        if self._rng is not None:
            torch.set_rng_state(self._rng[0])
            if self._rng[1] is not None:
                torch.cuda.set_rng_state_all(self._rng[1])
            self._rng = None

    # what the rest of the program may use ---------------------------------------------------------------------
    def keep_what_is_used_after(self, output) -> None:
        """After tracing: each marker also keeps what the program made before it and uses after it. The frames
        the marker saw do not reach a value held only by a torch-language function running at the read
        (``x[x > 0] = 0`` reads the mask's count inside ``nonzero(mask)``, then reads the mask): a continuation
        traced later for another value needs it, and CSE may have given it another name in the segments' trace."""
        bsyms = self.trace.bound_symbols
        made: set[str] = set()
        for i, marker in enumerate(bsyms):
            if marker.sym is not segment_end:
                made.update(p.name for p in marker.flat_proxy_outs)
                continue
            kept = {p.name for p in marker.args if isinstance(p, Proxy)}
            later = [p for name, p in uses(bsyms[i + 1:], tree_flatten(output)[0]).items()
                     if name in made and name not in kept]
            if later:
                bsyms[i] = marker.replace(args=(*marker.args, *later))

    def _live_proxies(self, exclude) -> list:
        """Intermediate tensors and numbers the interpreted frames (and native calls in progress, as ``max``
        comparing two tensors) can still reach: a continuation traced later for another value can use only these
        (and the program's inputs)."""
        from thunder.interpreter.frame import Frame
        from thunder.interpreter.runtime import current_runtime
        from thunder.interpreter.wrapped import WrappedValue

        made = self._made_names()
        rt = current_runtime()
        pending = [*rt.frames, *rt.native_arguments] if rt is not None else []
        seen, found = set(), {}
        budget = 100_000
        while pending and budget:
            x = pending.pop()
            budget -= 1
            if x is None or isinstance(x, (bool, int, float, complex, str, bytes, type, torch.Tensor)):
                continue
            if id(x) in seen:
                continue
            seen.add(id(x))
            if isinstance(x, Proxy):
                if x.name in made and x is not exclude and x.name != exclude.name:
                    found.setdefault(x.name, x)
                continue
            if isinstance(x, Frame):
                pending.extend(x.locals)
                pending.extend(x.stack)
            elif isinstance(x, WrappedValue):
                pending.append(x.value)
            elif isinstance(x, (list, tuple, set, frozenset)):
                pending.extend(x)
            elif isinstance(x, dict):
                pending.extend(x.values())
                pending.extend(x.keys())
            elif isinstance(x, types.FunctionType):
                for c in x.__closure__ or ():
                    try:
                        pending.append(c.cell_contents)
                    except ValueError:  # an empty cell
                        pass
            elif not isinstance(x, types.ModuleType):
                try:  # any object: its own __getattr__ may raise anything (torch.backends.cuda's plan cache)
                    d = getattr(x, "__dict__", None)
                    if isinstance(d, dict):
                        pending.extend(d.values())
                    for cls in type(x).__mro__:
                        for slot in cls.__dict__.get("__slots__", ()):
                            if isinstance(slot, str):
                                pending.append(getattr(x, slot, None))
                except Exception:
                    continue
        return list(found.values())

    def _made_names(self) -> set[str]:
        names = set()
        for bsym in self.trace.bound_symbols:
            for p in bsym.flat_proxy_outs:
                names.add(p.name)
        return names
