"""Async constructs are not supported: interpret() must raise InterpreterError naming the construct
and the user's source line (never crash, never let the program catch it).
"""

import types

import pytest

from thunder.interpreter import InterpreterError, interpret


async def _coro(x):
    return x


async def _agen():
    yield 1


class _AsyncCM:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *a):
        return False


def call_async_function():
    return _coro(1)  # LINE: call_async_function


def call_async_generator_function():
    return _agen()  # LINE: call_async_generator_function


def async_def_with_await():
    async def inner():
        await _coro(2)

    return inner()  # LINE: async_def_with_await


def async_for_and_with():
    async def inner():
        async with _AsyncCM():
            async for x in _agen():
                return x

    return inner()  # LINE: async_for_and_with


def async_comprehension():
    async def inner():
        return [x async for x in _agen()]

    return inner()  # LINE: async_comprehension


def async_lambda_call_in_comprehension():
    return [_coro(i) for i in range(2)]  # LINE: async_lambda_call_in_comprehension


def async_method_call():
    class C:
        async def m(self):
            return 1

    return C().m()  # LINE: async_method_call


def async_swallowed_by_except():
    try:
        return _coro(3)  # LINE: async_swallowed_by_except
    except Exception:
        return "swallowed"


def async_in_finally():
    try:
        pass
    finally:
        _coro(4)  # LINE: async_in_finally


@types.coroutine
def _generator_based_coroutine():
    yield


def yield_from_coroutine_object(coro):
    def gen():
        yield from coro  # LINE: yield_from_coroutine_object

    return list(gen())


PROGRAMS = [call_async_function, call_async_generator_function, async_def_with_await, async_for_and_with,
            async_comprehension, async_lambda_call_in_comprehension, async_method_call, async_swallowed_by_except,
            async_in_finally]


@pytest.mark.parametrize("fn", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
def test_async_construct_raises_interpreter_error(fn):
    with pytest.raises(InterpreterError) as info:
        interpret(fn, (), {})
    message = str(info.value)
    assert "async" in message
    assert f"# LINE: {fn.__name__}" in message  # the user's source line


def test_yield_from_native_coroutine_object():
    coro = _coro(5)
    try:
        with pytest.raises(InterpreterError) as info:
            interpret(yield_from_coroutine_object, (coro,), {})
        message = str(info.value)
        assert "coroutine" in message and "# LINE: yield_from_coroutine_object" in message
    finally:
        coro.close()
