"""Differential programs for control flow through try/except/finally/with and yield from.

They exercise every exception-handling path of the bytecode (CPython 3.10's block stack:
SETUP_FINALLY/SETUP_WITH/POP_BLOCK/POP_EXCEPT/RERAISE; 3.11+'s exception table) and run on all
supported versions.
"""

import contextlib
import sys

import pytest
from corpus_util import registry
from harness import check

CASES, case = registry()


def _exc_name():
    exc = sys.exc_info()[1]
    return None if exc is None else type(exc).__name__


@case(1)
def bs_finally_runs_after_return(x):
    log = []

    def f():
        try:
            return x
        finally:
            log.append("fin")

    return f(), log


@case()
def bs_break_and_continue_through_finally():
    out = []
    for i in range(5):
        try:
            if i == 1:
                continue
            if i == 3:
                break
            out.append(i)
        finally:
            out.append("f")
    return out


@case()
def bs_break_and_continue_in_except():
    out = []
    for i in range(4):
        try:
            1 / (i - 1)
        except ZeroDivisionError:
            out.append(("z", _exc_name()))
            continue
        try:
            raise KeyError(i)
        except KeyError:
            if i == 2:
                break
        out.append(i)
    return out, _exc_name()


@case()
def bs_nested_handlers_restore_exc_info():
    try:
        raise KeyError
    except KeyError:
        try:
            raise ValueError
        except ValueError:
            a = _exc_name()
        b = _exc_name()
    return a, b, _exc_name()


@case()
def bs_exception_leaving_handler_restores_exc_info():
    def f():
        try:
            raise KeyError("a")
        except KeyError:
            raise ValueError("b")

    try:
        f()
    except ValueError as e:
        inner = (repr(e.__context__), _exc_name())
    return inner, _exc_name()


@case()
def bs_finally_return_overrides_exception():
    def f():
        try:
            raise ValueError
        finally:
            return "fin"

    return f(), _exc_name()


@case()
def bs_try_except_else_finally():
    out = []
    for bad in (False, True):
        try:
            if bad:
                raise OSError(2, "no")
            x = 1
        except (KeyError, OSError) as e:
            x = e.errno
        else:
            x += 10
        finally:
            x *= 100
        out.append(x)
    return out


@case()
def bs_while_true_break_in_finally():
    n = 0
    while True:
        try:
            n += 1
            if n > 3:
                break
        finally:
            n += 10
    return n


@case(0)
@case(1)
def bs_with_suppress_and_exit_order(flag):
    log = []

    @contextlib.contextmanager
    def cm(name):
        log.append(("enter", name))
        try:
            yield name
        except ValueError:
            log.append(("swallow", name))
        finally:
            log.append(("exit", name))

    with cm("a") as a, cm("b") as b:
        log.append(a + b)
        if flag:
            raise ValueError
    try:
        with cm("c"), contextlib.suppress(KeyError):
            raise IndexError("i")
    except IndexError as e:
        log.append(repr(e))
    return log


@case()
def bs_return_inside_with():
    with contextlib.nullcontext(3) as v:
        return v


@case()
def bs_yield_from_throw_and_return():
    def inner():
        try:
            yield 1
            yield 2
        except KeyError as e:
            yield "caught %s" % e
        return "ret"

    def outer():
        r = yield from inner()
        yield r

    g = outer()
    return next(g), g.throw(KeyError("k")), next(g)


@case()
def bs_generator_close_runs_finally_and_exc_in_generator():
    log = []

    def g():
        try:
            raise ValueError("v")
        except ValueError:
            yield _exc_name()
        try:
            yield 1
        finally:
            log.append("fin")

    it = g()
    first = next(it)
    outside = _exc_name()
    second = next(it)
    it.close()
    return first, outside, second, log


@case()
def bs_super_with_self_in_closure():
    class Base:
        def m(self):
            return "base"

    class Derived(Base):
        def m(self):
            f = lambda: self  # noqa: E731 - self becomes a cell variable
            return super().m() + str(f() is self)

    return Derived().m()


@case(1, 2, 3, 4)
def bs_cell_arguments(a, b=2, *args, k=3, **kw):
    def inner():
        nonlocal a
        a += 1
        return a + b + k + len(args) + len(kw)

    return inner(), inner(), a


@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)
