"""Differential corpus: generators (send/throw/close, yield from, cleanup), comprehensions, iteration.

PYTEST_DONT_REWRITE: the programs' own asserts are part of what is tested.
"""

import itertools

import pytest
from corpus_util import registry
from harness import check

CASES, case = registry()


@case()
def gen_send_protocol():
    def acc():
        total = 0
        while True:
            x = yield total
            if x is None:
                break
            total += x
        return total

    g = acc()
    out = [next(g), g.send(3), g.send(4)]
    try:
        g.send(None)
    except StopIteration as e:
        out.append(("stop", e.value))
    return out


@case()
def gen_send_to_unstarted():
    def g():
        yield 1

    return g().send(5)


@case()
def gen_throw_caught_and_continue():
    def g():
        while True:
            try:
                yield "ready"
            except ValueError as e:
                yield f"caught {e}"

    it = g()
    return [next(it), it.throw(ValueError("boom")), next(it), it.throw(ValueError("two"))]


@case()
def gen_throw_uncaught():
    def g():
        yield 1
        yield 2

    it = g()
    next(it)
    try:
        it.throw(KeyError("k"))
    except KeyError as e:
        return "propagated", e.args, list(it)


@case()
def gen_throw_unstarted():
    def g():
        try:
            yield 1
        finally:
            pass

    it = g()
    try:
        it.throw(ValueError("early"))
    except ValueError as e:
        return str(e), list(it)


@case()
def gen_close_runs_finally():
    log = []

    def g():
        try:
            yield 1
            yield 2
        finally:
            log.append("cleanup")

    it = g()
    next(it)
    it.close()
    it.close()
    return log, list(it)


@case()
def gen_close_ignored():
    def g():
        for _ in range(2):  # bounded, so the garbage collector's close() succeeds
            try:
                yield 1
            except GeneratorExit:
                pass

    it = g()
    next(it)
    it.close()


@case()
def gen_close_catches_and_returns():
    def g():
        try:
            yield 1
        except GeneratorExit:
            return "done"

    it = g()
    next(it)
    return it.close()


@case()
def gen_return_value_in_stopiteration():
    def g():
        yield 1
        return "result"

    it = g()
    next(it)
    try:
        next(it)
    except StopIteration as e:
        return e.value, e.args


@case()
def gen_yield_from_return_value():
    def inner():
        yield 1
        yield 2
        return "inner-done"

    def outer():
        r = yield from inner()
        yield r

    return list(outer())


@case()
def gen_yield_from_send_delegates():
    def inner():
        got = []
        while len(got) < 2:
            got.append((yield len(got)))
        return got

    def outer():
        res = yield from inner()
        yield ("res", res)

    g = outer()
    return [next(g), g.send("a"), g.send("b")]


@case()
def gen_yield_from_throw_delegates():
    def inner():
        try:
            yield 1
        except KeyError:
            yield "inner caught"
        return "ret"

    def outer():
        r = yield from inner()
        yield r

    g = outer()
    return [next(g), g.throw(KeyError), next(g)]


@case()
def gen_yield_from_throw_unhandled_by_inner():
    def inner():
        yield 1

    def outer():
        try:
            yield from inner()
        except ValueError:
            yield "outer caught"

    g = outer()
    return [next(g), g.throw(ValueError("x"))]


@case()
def gen_yield_from_close_delegates():
    log = []

    def inner():
        try:
            yield 1
        finally:
            log.append("inner closed")

    def outer():
        try:
            yield from inner()
        finally:
            log.append("outer closed")

    g = outer()
    next(g)
    g.close()
    return log


@case()
def gen_yield_from_list_and_range():
    def g():
        yield from [1, 2]
        yield from range(3, 5)
        yield from "ab"
        yield from {"k": 1}

    return list(g())


@case()
def gen_yield_from_in_try_send():
    def inner():
        x = yield "first"
        return x * 2

    def outer():
        try:
            v = yield from inner()
        finally:
            pass
        yield v

    g = outer()
    return [next(g), g.send(21)]


@case()
def gen_yield_from_non_iterable():
    def g():
        yield from 5

    return list(g())


@case()
def gen_nested_pipeline():
    def numbers(n):
        for i in range(n):
            yield i

    def squares(it):
        for x in it:
            yield x * x

    def evens(it):
        return (x for x in it if x % 2 == 0)

    return list(evens(squares(numbers(10))))


@case()
def gen_expression_lazy_and_exhausted():
    calls = []

    def f(x):
        calls.append(x)
        return x

    g = (f(i) for i in range(3))
    first = next(g)
    rest = list(g)
    again = list(g)
    return first, rest, again, calls


@case()
def gen_expression_first_iter_eager():
    try:
        (x for x in 5)
    except TypeError as e:
        return str(e)


@case()
def gen_state_attributes():
    def g():
        yield 1

    it = g()
    return it.gi_running, iter(it) is it


@case()
def gen_running_reentry():
    def g():
        yield next(me)

    me = g()
    return next(me)


@case()
def gen_infinite_with_islice():
    def count(start):
        while True:
            yield start
            start += 1

    return list(itertools.islice(count(5), 4))


@case()
def gen_used_by_builtins():
    def g(n):
        for i in range(n):
            yield i

    return sum(g(5)), max(g(4)), sorted(g(3), reverse=True), dict(zip("abc", g(3))), any(g(0))


@case()
def gen_exception_inside_propagates():
    def g():
        yield 1
        raise ValueError("in gen")

    return list(g())


@case()
def gen_finally_on_exhaustion():
    log = []

    def g():
        try:
            yield 1
        finally:
            log.append("fin")

    return list(g()), log


@case()
def gen_with_statement_inside():
    log = []

    class CM:
        def __enter__(self):
            log.append("enter")

        def __exit__(self, *a):
            log.append("exit")

    def g():
        with CM():
            yield 1
            yield 2

    return list(g()), log


@case()
def gen_closure_over_loop_var():
    def make():
        for i in range(3):
            yield lambda: i

    return [f() for f in make()]


@case()
def gen_send_value_to_exhausted():
    def g():
        yield 1

    it = g()
    list(it)
    try:
        it.send(None)
    except StopIteration as e:
        return "stop", e.value


# ----- comprehensions and scoping ----------------------------------------------------------------


@case()
def comprehension_nested_loops():
    return [(i, j) for i in range(3) for j in range(i)], {i: [j for j in range(i)] for i in range(3)}


@case()
def comprehension_set_and_dict_filters():
    words = ["apple", "bob", "kayak", "zed"]
    return {w[0] for w in words if len(w) > 2}, {w: w == w[::-1] for w in words}


@case()
def comprehension_nonlocal_in_nested():
    def outer():
        count = 0

        def bump(x):
            nonlocal count
            count += x
            return count

        results = [[bump(j) for j in range(i)] for i in range(4)]
        return results, count

    return outer()


@case()
def comprehension_captures_enclosing():
    k = 10
    fs = [lambda x, i=i: x + i + k for i in range(3)]
    return [f(1) for f in fs]


@case()
def comprehension_lambda_late_binding():
    fs = [lambda: i for i in range(3)]
    return [f() for f in fs]


@case()
def comprehension_loop_var_does_not_leak():
    x = "outer"
    ys = [x for x in range(3)]
    return x, ys


@case()
def comprehension_walrus_leaks_to_function():
    data = [1, 5, 3, 8]
    found = [y for x in data if (y := x * 2) > 5]
    return found, y  # noqa: F821


@case()
def comprehension_error_inside():
    return [1 // x for x in (1, 0)]


@case()
def comprehension_over_dict_items():
    d = {"a": 1, "b": 2}
    return [k * v for k, v in d.items()], [k for k in d], sorted(d.values())


@case()
def comprehension_nested_closure_cell():
    def outer():
        x = 1
        fs = [(lambda: x + i) for i in range(2)]
        x = 5
        return [f() for f in fs]

    return outer()


@case()
def comprehension_in_class_body():
    class C:
        vals = [i * 2 for i in range(3)]
        total = sum(vals)

    return C.vals, C.total


@case()
def generator_expression_in_call():
    return sum(x * x for x in range(5)), tuple(str(i) for i in range(3)), "".join(c.upper() for c in "abc")


@case()
def unpacking_star_forms():
    a, *b, c = range(6)
    (d, e), f = "xy", [1]
    *g, = "hi"
    h, *i = [1]
    return a, b, c, d, e, f, g, h, i


@case()
def unpacking_too_many():
    a, b = [1, 2, 3]


@case()
def unpacking_too_few():
    a, b, c = (1, 2)


@case()
def unpacking_star_too_few():
    a, b, *c, d = [1, 2]


@case()
def unpacking_non_iterable():
    a, b = 7


@case()
def unpacking_from_generator():
    def g():
        yield from "abc"

    x, y, z = g()
    first, *rest = g()
    return x + y + z, first, rest


@case()
def iter_with_sentinel():
    data = [1, 2, 0, 3]
    it = iter(data)
    return list(iter(lambda: next(it), 0))


@case()
def iter_custom_getitem_sequence():
    class Seq:
        def __getitem__(self, i):
            if i >= 3:
                raise IndexError
            return i * 10

    return list(Seq()), 20 in Seq(), [x for x in Seq()]


@case()
def for_else_and_while_else():
    out = []
    for i in range(3):
        if i == 5:
            break
    else:
        out.append("for-else")
    n = 0
    while n < 3:
        n += 1
        if n == 2:
            break
    else:
        out.append("while-else")
    return out, n


@case()
def nested_loops_break_continue():
    out = []
    for i in range(4):
        for j in range(4):
            if j > i:
                break
            if (i + j) % 2:
                continue
            out.append((i, j))
    return out


@case()
def enumerate_zip_strict_and_start():
    a = list(enumerate("abc", start=1))
    b = list(zip([1, 2], "xy", (True, False)))
    try:
        list(zip([1], [1, 2], strict=True))
    except ValueError as e:
        return a, b, str(e)


@case()
def map_filter_with_interpreted_lambdas():
    return list(map(lambda x: x + 1, [1, 2])), list(filter(lambda s: s.isupper(), "aBcD")), \
        sorted(["bb", "a", "ccc"], key=len)


@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)
