"""``except*`` support (CPython 3.11+): matching exception groups and computing what is re-raised.

CHECK_EG_MATCH splits the exception being handled into (rest, match) for one ``except*`` clause;
at the end of the construct PREP_RERAISE_STAR (3.12+: CALL_INTRINSIC_2 INTRINSIC_PREP_RERAISE_STAR)
combines the unmatched rest and whatever the clauses raised into the exception to re-raise.

CPython tells an exception a clause re-raised (bare ``raise``) from one it raised anew by its
metadata: a split part keeps the original's ``__traceback__``, ``__cause__`` and ``__context__``,
and only a re-raise keeps the traceback unchanged. ``loop.py`` restores the traceback after a
re-raise (the interpreter's own Python frames would otherwise be added to it), so the identity
test below gives CPython's answer.
"""

from __future__ import annotations

import builtins

__all__ = ["check_except_star_type", "exception_group_match", "prep_reraise_star"]

_BaseExceptionGroup = getattr(builtins, "BaseExceptionGroup", None)  # 3.11+ (3.10 has no except*)

_NOT_BASE_EXCEPTION = "catching classes that do not inherit from BaseException is not allowed"
_GROUP_IN_EXCEPT_STAR = "catching ExceptionGroup with except* is not allowed. Use except instead."


def check_except_star_type(match_type) -> None:
    classes = match_type if isinstance(match_type, tuple) else (match_type,)
    for c in classes:
        if not (isinstance(c, type) and issubclass(c, BaseException)):
            raise TypeError(_NOT_BASE_EXCEPTION)
    for c in classes:
        if issubclass(c, _BaseExceptionGroup):
            raise TypeError(_GROUP_IN_EXCEPT_STAR)


def exception_group_match(exc, match_type):
    """``(match, rest)`` of ``exc`` for one ``except*`` clause; match is None when nothing matched."""
    if exc is None:
        return None, None
    if isinstance(exc, match_type):
        if isinstance(exc, _BaseExceptionGroup):
            return exc, None
        # A naked exception is wrapped in a group carrying its traceback.
        wrapped = _BaseExceptionGroup("", (exc,))  # an ExceptionGroup when exc is an Exception
        wrapped.__traceback__ = exc.__traceback__
        return wrapped, None
    if isinstance(exc, _BaseExceptionGroup):
        pair = exc.split(match_type)
        if type(pair) is not tuple:
            raise TypeError(f"{type(exc).__name__}.split must return a tuple, not {type(pair).__name__}")
        if len(pair) < 2:
            raise TypeError(f"{type(exc).__name__}.split must return a 2-tuple, got tuple of size {len(pair)}")
        return pair[0], pair[1]
    return None, exc


def _same_metadata(a, b) -> bool:
    return (a.__traceback__ is b.__traceback__ and a.__cause__ is b.__cause__
            and a.__context__ is b.__context__)


def _leaf_ids(exc, out: set) -> None:
    if isinstance(exc, _BaseExceptionGroup):
        for e in exc.exceptions:
            _leaf_ids(e, out)
    else:
        out.add(id(exc))


def _projection(orig, keep):
    """The part of group ``orig`` whose leaves occur in the groups ``keep`` (None if empty)."""
    ids = set()
    for e in keep:
        _leaf_ids(e, ids)
    if not ids:
        return None
    match, _ = _BaseExceptionGroup.split(orig, lambda e: id(e) in ids)  # not a subclass's override
    return match


def prep_reraise_star(orig, excs: list):
    """What a ``try``/``except*`` re-raises: None, a part of ``orig`` or a new group (CPython's rules)."""
    if not excs:
        return None
    if not isinstance(orig, _BaseExceptionGroup):
        # A naked exception was caught and wrapped; at most one clause ran.
        return excs[0]
    raised, reraised = [], []
    for e in excs:
        if e is None:
            continue
        (reraised if _same_metadata(e, orig) else raised).append(e)
    reraised_eg = _projection(orig, reraised)
    if not raised:
        return reraised_eg
    if reraised_eg is not None:
        raised.append(reraised_eg)
    return _BaseExceptionGroup("", raised) if len(raised) > 1 else raised[0]
