"""Native calls whose effect or result lives in state the trace cannot see: refused, never run only while tracing.

Seed 002's rule for opaque calls: a call whose effects lie outside the trace either runs on every call or is
refused. CPython objects such as Python's random generator, a ``collections.deque``, an iterator or a generator
keep their state inside C: a native call on one that came from outside the jitted function
(``next(batches)``, ``RNG.random()``, ``history.append(x)`` on a deque) would run once, while tracing, and every
cache hit would reuse its result and lose its effect. Calls on such objects made inside the call (an iterator
over a list the program built) are fine: the program makes them again on each call. Functions whose result
differs on each call (``time.perf_counter()``, ``os.urandom``) are refused on the user's own lines.

Tables keyed by type and by function; adding a kind is adding an entry.
"""

from __future__ import annotations

import array
import bisect
import collections
import heapq
import os
import random
import time
import types
import uuid

import torch

from thunder.core.errors import UnsupportedError, user_location_suffix
from thunder.core.trace import get_tracectx
from thunder.interpreter.typeutil import hashable as _hashable

__all__ = ["stateful_object", "refuse_native_call"]

_DRAW_ADVICE = ("draw with torch instead (torch.rand, torch.randint, torch.randperm use torch's generator, which "
                "thunder replays), or draw outside the jitted function and pass the value as an argument")
_CONTAINER_ADVICE = "use a list (whose changes thunder replays), or do this outside the jitted function"
_GENERATOR_ADVICE = ("seed it or read its state outside the jitted function; inside, pass it to torch's random "
                     "functions (generator=g), which thunder runs on every call")

# type -> (what it is, what to do); matched with isinstance, so subclasses count
_STATEFUL_TYPES = {
    random.Random: ("Python's random number generator", _DRAW_ADVICE),
    collections.deque: ("a collections.deque", _CONTAINER_ADVICE),
    array.array: ("an array.array", _CONTAINER_ADVICE),
    bytearray: ("a bytearray", _CONTAINER_ADVICE),
    torch.Generator: ("a torch.Generator", _GENERATOR_ADVICE),
}
# by module prefix and class name, for libraries thunder does not import
_STATEFUL_BY_NAME = {
    ("numpy.random", "RandomState"): ("numpy's random number generator", _DRAW_ADVICE),
    ("numpy.random", "Generator"): ("numpy's random number generator", _DRAW_ADVICE),
}
# refused on the user's own lines only: libraries count ids with ``next(itertools.count())`` for bookkeeping the
# program does not compute with (torch.autograd.Function's class ids)
_ITERATOR = ("an iterator or generator", "take its items outside the jitted function and pass them as arguments, "
             "or iterate over a list")

# functions that change their first argument in place (a list from outside: the change would be lost)
_MUTATING_FUNCTIONS = frozenset({heapq.heappush, heapq.heappop, heapq.heapify, heapq.heapreplace, heapq.heappushpop,
                                 bisect.insort, bisect.insort_left, bisect.insort_right})
# functions whose result differs on every call: baked into the program, it would be the first call's. Refused on
# the user's own lines only: libraries read the clock for what the program does not compute with (a log
# record's timestamp)
# objects the trace would hold as made while tracing: the program's next call would go on with that object, where
# eager makes a new one (a torch.Generator seeded inside the function draws the same numbers on every call)
_MADE_ONCE = {torch.Generator: ("a torch.Generator", "create and seed it outside the jitted function and pass it in "
                                "(its state then advances on every call as in eager), or seed the default generator "
                                "with torch.manual_seed inside")}
_CHANGING_RESULTS = frozenset({time.time, time.time_ns, time.perf_counter, time.perf_counter_ns, time.monotonic,
                               time.monotonic_ns, time.process_time, time.process_time_ns, time.thread_time,
                               time.thread_time_ns, os.urandom, uuid.uuid1, uuid.uuid4})


def _native_iterator(tp) -> bool:
    """An iterator whose ``__next__`` is C code (a generator, ``itertools.count()``, ``iter(lst)``): its position
    is state the trace cannot see. One with a Python ``__next__`` is interpreted, its writes replayed."""
    method = getattr(tp, "__next__", None)
    return method is not None and type(method) is not types.FunctionType


def stateful_object(obj):
    """(what it is, what to do) for an object whose native methods change or read hidden state; else None."""
    tp = type(obj)
    try:
        return _KINDS[tp]
    except KeyError:
        pass
    entry = _kind_of(tp)
    _KINDS[tp] = entry
    return entry


_KINDS: dict = {}  # type -> its entry (or None), as every outside value read asks


def _kind_of(tp):
    for stateful, entry in _STATEFUL_TYPES.items():
        if issubclass(tp, stateful):
            return entry
    for klass in tp.__mro__:
        for (prefix, name), entry in _STATEFUL_BY_NAME.items():
            if klass.__name__ == name and (klass.__module__ or "").startswith(prefix):
                return entry
    if issubclass(tp, types.GeneratorType) or _native_iterator(tp):
        return _ITERATOR
    return None


def _name(fn) -> str:
    owner = getattr(fn, "__self__", None)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
    if owner is not None and not isinstance(owner, types.ModuleType) and "." not in name:
        return f"{type(owner).__name__}.{name}"
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module and module != "builtins" else name


def _method_of(fn, obj) -> bool:
    """``fn`` is the class's own method, called with ``obj`` as its receiver."""
    name = getattr(fn, "__name__", None)
    return type(name) is str and getattr(type(obj), name, None) is fn


def refuse_native_call(fn, wargs, outside_objects: dict) -> None:
    """Raise for a native call the cached program could not repeat: on a stateful object from outside (its bound
    method's receiver among ``outside_objects``, by id, or an argument whose provenance is outside), a function
    that changes an outside list, or one whose result changes on every call."""
    keyed = _hashable(fn)  # asked once: every native call while tracing comes here
    if keyed and fn in _MADE_ONCE:
        what, advice = _MADE_ONCE[fn]
        raise UnsupportedError(
            f"creating {what} inside the jitted function is not supported: thunder.jit would create it once, while "
            f"tracing, and every later call would go on drawing from that one{user_location_suffix()}; {advice}")
    if keyed and fn in _CHANGING_RESULTS and _on_users_line():
        raise UnsupportedError(
            f"{_name(fn)}() gives a new result on every call, but thunder.jit would read it once, while tracing, and "
            f"reuse it on every call{user_location_suffix()}; call it outside the jitted function and pass the "
            "result as an argument")
    if keyed and fn in _MUTATING_FUNCTIONS and wargs and wargs[0].provenance.is_outside:
        raise UnsupportedError(
            f"{_name(fn)}() changes a {type(wargs[0].value).__name__} from outside the jitted function in native "
            f"code, which thunder.jit would do only while tracing, not on every call{user_location_suffix()}; "
            "copy it first, or do this outside the jitted function")
    owner = getattr(fn, "__self__", None)
    passed_in = False
    if owner is not None and id(owner) in outside_objects and outside_objects[id(owner)] is owner:
        receiver = owner
    elif wargs and wargs[0].provenance.is_outside and (fn is next or _method_of(fn, wargs[0].value)):
        receiver = wargs[0].value  # ``next(it)``, or ``rng.random()`` called as ``Random.random(rng)``
        passed_in = wargs[0].provenance.path()[0][0] in ("arg", "kwarg")
    else:
        return
    entry = stateful_object(receiver)
    # a library's own iterators (torch's counter of autograd.Function classes) are its business; an iterator the
    # caller passed in is the caller's data wherever it is consumed (``clip_grad_norm_(model.parameters())``)
    if entry is None or (entry is _ITERATOR and not passed_in and not _on_users_line()):
        return
    what, advice = entry
    call = "next()" if fn is next else f"{type(receiver).__name__}.{fn.__name__}()"
    raise UnsupportedError(
        f"{call} on {what} from outside the jitted function changes or reads state kept in native code, which "
        f"thunder.jit would do only while tracing: every later call would reuse that result{user_location_suffix()}; "
        f"{advice}")


def _on_users_line() -> bool:
    trace = get_tracectx()
    if trace is None:
        return False
    here = trace.current_location()
    return here is not None and here == trace.user_location()
