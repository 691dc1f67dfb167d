"""Differential corpus: functions, closures and cells, decorators, recursion, calls, f-strings, walrus, match.

PYTEST_DONT_REWRITE: the programs' own asserts are part of what is tested.
"""

import functools

import pytest
from corpus_util import registry
from harness import check

CASES, case = registry()

COUNTER = [0]


def _kw(a, b=2, *args, c, d=4, **kw):
    return a, b, args, c, d, kw


@case()
def call_star_args_kwargs_mix():
    t = (1, 2, 3)
    d = {"c": 5, "z": 6}
    return _kw(*t, **d), _kw(0, *[], c=1, **{}), _kw(*t[:1], *t[1:], c=0, **{"d": 9}, **{"e": 1})


@case()
def call_duplicate_keyword_via_star():
    return _kw(1, c=1, **{"c": 2})


@case()
def call_kwargs_non_mapping():
    return _kw(1, **[("c", 1)])


@case()
def call_kwargs_non_string_keys():
    return _kw(1, c=1, **{1: 2})


@case()
def call_missing_several_positional():
    def f(a, b, c, *, d):
        return a

    return f()


@case()
def call_too_many_positional():
    def f(a, b):
        return a

    return f(1, 2, 3)


@case()
def call_unexpected_keyword():
    def f(a):
        return a

    return f(a=1, b=2)


@case()
def call_positional_only_as_keyword():
    def f(a, /, b):
        return a, b

    return f(a=1, b=2)


@case()
def call_positional_only_with_kwargs_collector():
    def f(a, /, **kw):
        return a, kw

    return f(1, a=2)


@case()
def call_non_callable():
    x = 5
    return x()


@case()
def defaults_evaluated_once():
    def f(x, acc=[]):  # noqa: B006
        acc.append(x)
        return list(acc)

    return f(1), f(2), f(3, [])


@case()
def kwdefaults_and_annotations():
    def f(a: int, *, b: str = "x") -> tuple:
        return a, b

    return f(1), f(2, b="y"), f.__kwdefaults__, sorted(f.__annotations__)


@case()
def closures_counter_factory():
    def make():
        n = 0

        def inc(step=1):
            nonlocal n
            n += step
            return n

        return inc

    a, b = make(), make()
    return a(), a(5), b(), a.__closure__[0].cell_contents


@case()
def closure_shared_cell_between_functions():
    def make():
        v = []

        def push(x):
            v.append(x)

        def get():
            return tuple(v)

        return push, get

    push, get = make()
    push(1)
    push(2)
    return get()


@case()
def del_cell_variable_then_read():
    def f():
        x = 1

        def g():
            return x

        del x
        return g()

    return f()


@case()
def del_cell_then_reassign():
    def f():
        x = 1

        def g():
            return x

        del x
        x = 2
        return g()

    return f()


@case()
def del_unbound_local():
    def f():
        del y  # noqa: F821
        y = 1

    return f()


@case()
def unbound_local_read():
    def f():
        if False:
            z = 1
        return z

    return f()


@case()
def free_variable_unbound_in_enclosing():
    def outer():
        def inner():
            return late

        r = inner()
        late = 1
        return r

    return outer()


@case()
def name_error_global():
    return undefined_global_name  # noqa: F821


@case()
def name_error_in_nested():
    def f():
        return also_not_defined  # noqa: F821

    try:
        f()
    except NameError as e:
        return str(e), e.name


@case()
def global_statement_writes():
    global COUNTER
    old = COUNTER
    COUNTER = [5]
    res = COUNTER[0]
    COUNTER = old
    return res, COUNTER is old


@case()
def nonlocal_in_nested_comprehension_and_lambda():
    def f():
        total = 0

        def add(v):
            nonlocal total
            total += v

        [add(x) for row in [[1, 2], [3]] for x in row]
        g = lambda: total * 10  # noqa: E731
        return total, g()

    return f()


@case()
def nested_scopes_three_levels():
    def a():
        x = "a"

        def b():
            y = "b"

            def c():
                return x + y

            return c

        return b()()

    return a()


@case()
def decorators_stacked_with_args():
    def tag(name):
        def deco(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                return f"<{name}>{fn(*args, **kwargs)}</{name}>"

            return wrapper

        return deco

    @tag("b")
    @tag("i")
    def hello(who="world"):
        """doc"""
        return f"hi {who}"

    return hello(), hello(who="you"), hello.__name__, hello.__doc__, hello.__wrapped__.__name__


@case()
def decorator_class_based_and_counting():
    class Count:
        def __init__(self, fn):
            self.fn = fn
            self.calls = 0

        def __call__(self, *a):
            self.calls += 1
            return self.fn(*a)

    @Count
    def sq(x):
        return x * x

    return [sq(i) for i in range(3)], sq.calls


@case()
def decorator_lru_cache_and_partial():
    @functools.lru_cache(maxsize=None)
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    p = functools.partial(_kw, 1, c=3)
    return fib(30), p(2, d=5), functools.reduce(lambda a, b: a * b, range(1, 6))


@case(12)
def recursion_factorial_and_ackermann(n):
    def fact(k):
        return 1 if k <= 1 else k * fact(k - 1)

    def ack(m, n):
        if m == 0:
            return n + 1
        if n == 0:
            return ack(m - 1, 1)
        return ack(m - 1, ack(m, n - 1))

    return fact(n), ack(2, 2)


@case()
def recursion_tree_walk():
    tree = {"v": 1, "kids": [{"v": 2, "kids": []}, {"v": 3, "kids": [{"v": 4, "kids": []}]}]}

    def total(node):
        return node["v"] + sum(total(k) for k in node["kids"])

    def depth(node):
        return 1 + max((depth(k) for k in node["kids"]), default=0)

    return total(tree), depth(tree)


@case()
def lambda_defaults_and_varargs():
    f = lambda a, b=2, *rest, **kw: (a, b, rest, kw)  # noqa: E731
    return f(1), f(1, 3, 4, x=5)


@case(3, "x")
def fstrings_all_forms(n, s):
    pi = 3.14159
    return (f"{n}", f"{n!r}", f"{s!r}", f"{s!a}", f"{pi:.2f}", f"{n:>{n + 2}}", f"{n=}", f"{'é'!a}",
            f"{n:08b}", f"{{literal}}", f"{s * 2}{n}", f"{1e6:,.1f}", f"{None}", f"{[n, s]}")


@case()
def fstring_format_error():
    return f"{'abc':d}"


@case()
def walrus_in_while_and_if():
    data = [1, 2, 3, 0, 4]
    it = iter(data)
    out = []
    while (x := next(it)) != 0:
        out.append(x)
    if (n := len(out)) > 2:
        out.append(n)
    return out, x


@case(5)
def match_literals_and_guards(v):
    def classify(x):
        match x:
            case 0 | 1:
                return "small"
            case int() if x < 0:
                return "negative"
            case int(n) if n > 100:
                return "big"
            case str() as s:
                return f"str {s}"
            case None:
                return "none"
            case _:
                return "other"

    return [classify(x) for x in (0, 1, -3, 500, "a", None, v, 2.5)]


@case()
def match_sequences_and_mappings():
    def m(x):
        match x:
            case []:
                return "empty"
            case [a]:
                return ("one", a)
            case [a, *rest] if len(rest) > 2:
                return ("long", a, rest)
            case (a, b):
                return ("pair", a, b)
            case {"type": "pt", "x": x0, **others}:
                return ("pt", x0, others)
            case {"k": [1, *_]}:
                return "k-list"
            case _:
                return "no"

    return [m(x) for x in ([], [1], [1, 2, 3, 4], (1, 2), {"type": "pt", "x": 1, "y": 2}, {"k": [1, 5]}, "ab", 3)]


@case()
def match_class_patterns():
    class Point:
        __match_args__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

    def where(p):
        match p:
            case Point(0, 0):
                return "origin"
            case Point(x=0, y=y):
                return f"y-axis {y}"
            case Point(x, y=0):
                return f"x-axis {x}"
            case Point(x, y) if x == y:
                return "diag"
            case _:
                return "elsewhere"

    return [where(Point(*c)) for c in ((0, 0), (0, 5), (3, 0), (2, 2), (1, 2))]


@case()
def match_class_too_many_positional():
    class P:
        __match_args__ = ("a",)
        a = 1

    match P():
        case P(x, y):
            return x, y


@case()
def match_value_patterns_and_or_capture():
    import enum

    class C(enum.Enum):
        A = 1
        B = 2

    def f(x):
        match x:
            case C.A:
                return "A"
            case (1 | 2) as n:
                return f"num {n}"
            case [C.B, *_]:
                return "starts B"
        return "none"

    return [f(x) for x in (C.A, 2, [C.B, 1], 7)]


@case()
def chained_comparisons_short_circuit():
    log = []

    def v(x):
        log.append(x)
        return x

    r = v(1) < v(0) < v(5)
    r2 = v(1) < v(2) <= v(2) != v(3)
    return r, r2, log


@case()
def conditional_expressions_and_truthiness():
    vals = [0, 1, "", "a", [], [0], None, 0.0, {}, set()]
    return [("T" if v else "F") for v in vals], [bool(v) for v in vals]


@case()
def bool_of_custom_len_and_bool():
    class L:
        def __len__(self):
            return 0

    class B:
        def __bool__(self):
            return True

    r = []
    if L():
        r.append("L")
    if B():
        r.append("B")
    if not L():
        r.append("notL")
    return r, (L() or "alt"), (B() and "and")


@case()
def bool_returns_non_bool():
    class Bad:
        def __bool__(self):
            return 1

    if Bad():
        return 1


@case()
def string_methods_and_slicing():
    s = "Hello, World"
    return (s[::-1], s[2:8:2], s.lower().split(", "), "-".join(["a", "b"]), s.replace("l", "L", 2),
            s.find("o"), s.partition(","), s.startswith(("He", "x")), s[100:], s[-3:])


@case()
def slice_assignment_and_deletion():
    a = list(range(10))
    a[2:5] = ["x"]
    del a[::3]
    b = list(range(5))
    b[::2] = "abc"
    try:
        b[::2] = [1]
    except ValueError as e:
        err = str(e)
    return a, b, err


@case()
def dict_operations():
    d = {"a": 1}
    d.update(b=2)
    d |= {"c": 3}
    d.setdefault("d", []).append(4)
    merged = {**d, "a": 0}
    popped = d.pop("b")
    return d, merged, popped, d.get("zz", "dflt"), list(d.items())[:2], {"a": 1} | {"b": 2}


@case()
def dict_key_error_message():
    return {"x": 1}[("t", 1)]


@case()
def int_float_edge_cases():
    return (7 // -2, -7 % 3, divmod(-7, 2), 2 ** -1, round(2.5), round(3.5), int("-0x1f", 16),
            float("inf") > 1e308, 0.1 + 0.2 == 0.3, (-2) ** 0.5 == complex(0, 2 ** 0.5) or True, 10 ** 20 // 3)


@case()
def overflow_and_value_errors():
    try:
        int("x")
    except ValueError as e:
        a = str(e)
    try:
        float("1e400") and (10.0 ** 400)
    except OverflowError as e:
        b = str(e)
    return a, b


@case()
def global_and_builtin_shadowing():
    len = lambda x: -1  # noqa: E731, A001
    return len([1, 2]), max([1, 3])


@case()
def import_inside_function():
    import math
    from collections import OrderedDict as OD
    from os import path as p

    return math.sqrt(16), list(OD(a=1)), p.join("a", "b")


@case()
def import_missing_name():
    from math import not_a_name  # noqa: F401


@case()
def import_missing_module():
    import not_a_real_module_xyz  # noqa: F401


@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)
