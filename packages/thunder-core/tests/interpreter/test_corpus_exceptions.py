"""Differential corpus: exceptions, try/except/finally, chaining, with-statements.

PYTEST_DONT_REWRITE: the programs' own asserts are part of what is tested.
"""

import contextlib

import pytest
from corpus_util import registry
from harness import check

CASES, case = registry()


class MyError(Exception):
    pass


class OtherError(MyError):
    def __init__(self, code):
        super().__init__(f"code {code}")
        self.code = code


@case(1)
def exc_chain_implicit(x):
    try:
        try:
            raise ValueError("inner")
        except ValueError:
            raise KeyError("outer")
    except KeyError as e:
        return type(e.__context__).__name__, str(e.__context__), e.__cause__, e.__suppress_context__


@case()
def exc_chain_explicit_escapes():
    try:
        1 / 0
    except ZeroDivisionError as e:
        raise RuntimeError("wrapped") from e


@case()
def exc_chain_from_none_escapes():
    try:
        {}["k"]
    except KeyError:
        raise ValueError("clean") from None


@case()
def exc_implicit_chain_escapes():
    try:
        [][3]
    except IndexError:
        {}["missing"]


@case()
def exc_chain_three_levels():
    try:
        try:
            try:
                raise ValueError(1)
            except ValueError:
                raise TypeError(2)
        except TypeError:
            raise KeyError(3)
    except KeyError as e:
        out = []
        c = e
        while c is not None:
            out.append((type(c).__name__, c.args))
            c = c.__context__
        return out


@case()
def finally_overrides_return_toplevel():
    try:
        return "try"
    finally:
        return "finally"  # noqa: B012


@case()
def finally_overrides_exception():
    try:
        raise ValueError("lost")
    finally:
        return "swallowed"  # noqa: B012


@case()
def finally_runs_on_break():
    log = []
    for i in range(5):
        try:
            if i == 2:
                break
            log.append(i)
        finally:
            log.append(f"f{i}")
    return log


@case()
def finally_runs_on_continue():
    log = []
    for i in range(3):
        try:
            if i == 1:
                continue
            log.append(i)
        finally:
            log.append(-i)
    return log


@case()
def finally_return_value_evaluated_before():
    x = [1]
    try:
        return x
    finally:
        x.append(2)


@case()
def nested_finally_order():
    log = []

    def inner():
        try:
            try:
                log.append("a")
                return 1
            finally:
                log.append("b")
        finally:
            log.append("c")

    return inner(), log


@case()
def except_tuple_and_lookup_hierarchy():
    out = []
    for exc in (ValueError, TypeError, KeyError, IndexError):
        try:
            raise exc("x")
        except (ValueError, TypeError) as e:
            out.append(("vt", type(e).__name__))
        except LookupError as e:
            out.append(("lookup", type(e).__name__))
    return out


@case()
def except_name_unbound_after():
    try:
        raise ValueError
    except ValueError as e:
        pass
    try:
        return e  # noqa: F821
    except NameError as n:
        return type(n).__name__, str(n)


@case()
def except_else_branch():
    log = []
    for v in (0, 1):
        try:
            if v:
                raise ValueError
        except ValueError:
            log.append("except")
        else:
            log.append("else")
        finally:
            log.append("finally")
    return log


@case()
def bare_reraise_keeps_identity():
    err = ValueError("same")
    try:
        try:
            raise err
        except ValueError:
            raise
    except ValueError as e:
        return e is err


@case()
def reraise_without_active():
    raise  # noqa: PLE0704


@case()
def raise_from_non_exception():
    raise ValueError("v") from 42


@case()
def raise_class_instantiates():
    try:
        raise OtherError.__mro__[2]
    except Exception as e:
        return type(e).__name__, e.args


@case()
def raise_custom_with_attrs():
    try:
        raise OtherError(7)
    except MyError as e:
        return e.code, str(e), isinstance(e, OtherError)


@case()
def custom_exception_escapes():
    raise OtherError(3)


@case()
def catch_non_exception_class():
    try:
        raise ValueError
    except int:  # noqa
        return 1


@case()
def exception_in_except_handler():
    try:
        raise ValueError("first")
    except ValueError:
        return int("nope")


@case()
def exception_in_finally_replaces():
    try:
        raise ValueError("first")
    finally:
        raise KeyError("second")


@case()
def sys_exc_info_inside_handler():
    import sys

    before = sys.exc_info()
    try:
        raise TypeError("t")
    except TypeError:
        during = sys.exc_info()
    after = sys.exc_info()
    return before, during[0].__name__, str(during[1]), after


@case()
def nested_handlers_restore_exc():
    import sys

    try:
        raise ValueError("outer")
    except ValueError:
        try:
            raise KeyError("inner")
        except KeyError:
            pass
        return type(sys.exc_info()[1]).__name__


@case()
def exception_args_and_str():
    e = ValueError(1, "two")
    k = KeyError("key")
    return e.args, str(e), repr(e), str(k), repr(k)


@case()
def exception_notes_and_with_traceback():
    e = ValueError("v")
    e.add_note("note 1")
    e2 = e.with_traceback(None)
    return e.__notes__, e2 is e


@case()
def assert_statement_fail(x=0):
    assert x, f"x was {x}"


@case()
def assert_statement_pass():
    assert 1 == 1, "never"
    return "ok"


@case()
def assert_no_message():
    assert [], None


@case()
def try_in_loop_with_return():
    def find(xs, t):
        for i, x in enumerate(xs):
            try:
                if x == t:
                    return i
            finally:
                pass
        return -1

    return find([3, 4, 5], 5), find([], 1)


@case()
def exception_group_native():
    eg = ExceptionGroup("grp", [ValueError(1), TypeError(2)])
    match, rest = eg.split(ValueError)
    return str(eg), len(match.exceptions), len(rest.exceptions)


@case()
def stopiteration_in_generator_becomes_runtime():
    def gen():
        yield 1
        raise StopIteration("bad")

    return list(gen())


@case()
def keyboard_interrupt_like_base():
    class Stop(BaseException):
        pass

    try:
        try:
            raise Stop()
        except Exception:
            return "wrong"
    except BaseException as e:
        return type(e).__name__


# ----- with-statements -----------------------------------------------------------------------------


class Recorder:
    def __init__(self, log, name, suppress=False):
        self.log, self.name, self.suppress = log, name, suppress

    def __enter__(self):
        self.log.append(f"enter {self.name}")
        return self.name.upper()

    def __exit__(self, tp, val, tb):
        self.log.append(f"exit {self.name} {tp.__name__ if tp else None}")
        return self.suppress


@case()
def with_suppresses():
    log = []
    with Recorder(log, "a", suppress=True):
        raise ValueError
    log.append("after")
    return log


@case()
def with_does_not_suppress():
    log = []
    try:
        with Recorder(log, "a") as v:
            log.append(v)
            raise KeyError("k")
    except KeyError as e:
        log.append(repr(e))
    return log


@case()
def with_multiple_and_return():
    log = []

    def f():
        with Recorder(log, "a") as a, Recorder(log, "b") as b:
            return a + b

    return f(), log


@case()
def with_break_in_loop():
    log = []
    for i in range(3):
        with Recorder(log, str(i)):
            if i == 1:
                break
    return log


@case()
def with_enter_raises_skips_exit():
    log = []

    class E:
        def __enter__(self):
            raise KeyError("enter")

        def __exit__(self, *a):
            log.append("exit")

    try:
        with E():
            log.append("body")
    except KeyError as e:
        return log, e.args


@case()
def with_exit_missing():
    class OnlyEnter:
        def __enter__(self):
            return self

    with OnlyEnter():
        pass


@case()
def with_exit_raises():
    class Bad:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            raise RuntimeError("from exit")

    with Bad():
        raise ValueError("body")


@case()
def with_contextmanager_generator():
    log = []

    @contextlib.contextmanager
    def cm(tag):
        log.append(f"in {tag}")
        try:
            yield tag * 2
        except ZeroDivisionError:
            log.append("caught")
        finally:
            log.append(f"out {tag}")

    with cm("x") as v:
        log.append(v)
    with cm("y"):
        1 / 0
    return log


@case()
def with_suppress_and_exitstack():
    log = []
    with contextlib.suppress(KeyError):
        {}["a"]
    with contextlib.ExitStack() as stack:
        for n in "ab":
            stack.callback(log.append, n)
        log.append("body")
    return log


@case()
def with_tuple_target():
    class Pair:
        def __enter__(self):
            return (1, [2, 3])

        def __exit__(self, *a):
            return False

    with Pair() as (a, [b, c]):
        return a + b + c


@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)
