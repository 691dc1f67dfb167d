"""Differential harness: run a function natively and through interpret() and compare."""

import copy

from thunder.interpreter import interpret


def _outcome(fn, args, kwargs, runner):
    try:
        return ("ok", runner(fn, args, kwargs))
    except Exception as e:  # noqa: BLE001 - the exception itself is what we compare
        return ("raise", e)


def _describe_exc(e):
    chain = []
    while e is not None and len(chain) < 5:
        chain.append((type(e), str(e), e.__suppress_context__))
        e = e.__cause__ or e.__context__
    return chain


def check(fn, *args, **kwargs):
    """Assert that interpret(fn) matches fn: result, exception (type, message, chain), side effects.

    Arguments are deep-copied for each run so mutations are compared too. Returns the result.
    """
    native_args, native_kwargs = copy.deepcopy((args, kwargs))
    interp_args, interp_kwargs = copy.deepcopy((args, kwargs))
    expected = _outcome(fn, native_args, native_kwargs, lambda f, a, k: f(*a, **k))
    actual = _outcome(fn, interp_args, interp_kwargs, lambda f, a, k: interpret(f, a, k))
    assert actual[0] == expected[0], f"native: {expected!r}, interpreted: {actual!r}"
    if expected[0] == "ok":
        assert actual[1] == expected[1], f"native returned {expected[1]!r}, interpreted {actual[1]!r}"
    else:
        assert _describe_exc(actual[1]) == _describe_exc(expected[1])
    assert (interp_args, interp_kwargs) == (native_args, native_kwargs), "side effects on arguments differ"
    return actual[1]
