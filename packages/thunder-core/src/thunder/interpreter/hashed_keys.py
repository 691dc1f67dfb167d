"""Values native code hashes on the program's behalf: set members, dict keys, ``hash()``.

CPython hashes a number by its value; a hook may stand for a number by an object hashed otherwise (a jit's
symbolic number, hashed by identity). Before a set or dict sees a key, the hook's ``dict_key`` maps it to what
eager Python would hash (the number itself, made a constraint of the trace). Keys inside a tuple key, and the
items of an iterable a set or dict is built from, are mapped the same way.
"""

from __future__ import annotations

import collections

__all__ = ["hashed", "hashed_items", "hashed_arguments"]

# bound methods of sets and dicts whose first argument is a key
_KEYED_METHODS = {
    set: frozenset({"add", "discard", "remove", "__contains__"}),
    frozenset: frozenset({"__contains__"}),
    dict: frozenset({"__getitem__", "__setitem__", "__delitem__", "__contains__", "get", "pop", "setdefault"}),
}
# callables taking an iterable of keys -> its position (Counter's update counts through _count_elements)
_BUILT_FROM_KEYS = {set: 0, frozenset: 0, dict.fromkeys: 0, collections._count_elements: 1}


def hashed(rt, key):
    if type(key) is tuple:
        return tuple(hashed(rt, k) for k in key)
    return rt.hooks.dict_key(key)


def hashed_items(rt, items):
    if isinstance(items, (tuple, list)):
        return [hashed(rt, k) for k in items]
    return items


def hashed_arguments(rt, fn, args: list) -> None:
    """Maps, in place, the arguments of the native call ``fn(*args)`` that it hashes."""
    if not args:
        return
    owner = getattr(fn, "__self__", None)
    names = _KEYED_METHODS.get(type(owner))
    if names is not None and getattr(fn, "__name__", None) in names:
        args[0] = hashed(rt, args[0])
        return
    objclass = getattr(fn, "__objclass__", None)  # set.add(s, k): the unbound method
    names = _KEYED_METHODS.get(objclass)
    if names is not None and getattr(fn, "__name__", None) in names and len(args) > 1:
        args[1] = hashed(rt, args[1])
        return
    if fn is hash:
        args[0] = hashed(rt, args[0])
        return
    try:
        position = _BUILT_FROM_KEYS.get(fn)
    except TypeError:  # an unhashable callable
        return
    if position is not None and position < len(args):
        args[position] = hashed_items(rt, args[position])
