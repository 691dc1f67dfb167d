"""Differential tests: each small program must behave the same natively and interpreted.

PYTEST_DONT_REWRITE: the programs' own asserts are part of what is tested.
"""

import contextlib
import dataclasses
import functools

import pytest
from harness import check

CASES = []


def case(*args, **kwargs):
    def register(fn):
        CASES.append(pytest.param(fn, args, kwargs, id=fn.__name__))
        return fn

    return register


# ----- arithmetic, comparison, logic --------------------------------------------------------------


@case(7, 3)
def arith(a, b):
    return a + b, a - b, a * b, a / b, a // b, a % b, a ** b, -a, +a, ~a, a << 2, a >> 1, a & b, a | b, a ^ b


@case(2.5, 4)
def inplace_ops(x, n):
    y = x
    y += n
    y *= 2
    y -= 1
    y /= 3
    z = n
    z //= 3
    z **= 2
    z %= 5
    z <<= 3
    z >>= 1
    z |= 8
    z &= 12
    z ^= 5
    return y, z


@case(3, 5)
def comparisons(a, b):
    return a < b, a <= b, a == b, a != b, a > b, a >= b, 1 < a < b, a < b < 4, a is b, a is not None


@case(0, 5, "")
def boolean_logic(a, b, s):
    return (a and b), (a or b), (not a), (s or "default"), (b and s), (a or s or b)


@case(1, 0)
def zero_division(a, b):
    return a / b


@case("a", 1)
def type_error_add(a, b):
    return a + b


@case([1, 2], [3])
def list_concat_repeat(a, b):
    return a + b, a * 2, 3 * b, "ab" * 2


@case(10)
def matmul_missing(x):
    return x @ x


# ----- control flow -------------------------------------------------------------------------------


@case(5)
def if_elif_else(x):
    if x < 0:
        return "neg"
    elif x == 0:
        return "zero"
    elif x < 3:
        return "small"
    else:
        return "big"


@case(10)
def while_loop(n):
    i, total = 0, 0
    while i < n:
        total += i
        i += 1
    return total


@case(10)
def for_break_continue_else(n):
    out = []
    for i in range(n):
        if i % 2:
            continue
        if i > 6:
            break
        out.append(i)
    else:
        out.append("no-break")
    for j in range(3):
        pass
    else:
        out.append("else")
    return out


@case(5)
def while_else(n):
    while n > 0:
        n -= 1
        if n == 10:
            break
    else:
        return "else", n
    return "break"


@case([[1, 2], [3, 4, 5]])
def nested_loops(rows):
    total = 0
    for row in rows:
        for x in row:
            if x == 4:
                break
            total += x
    return total


@case(4)
def ternary(x):
    return "even" if x % 2 == 0 else "odd"


@case(3)
def assert_ok(x):
    assert x > 0, "positive"
    return x


@case(-3)
def assert_fails(x):
    assert x > 0, f"expected positive, got {x}"


@case()
def pass_and_none():
    pass


# ----- unpacking ----------------------------------------------------------------------------------


@case((1, 2, 3))
def unpack_tuple(t):
    a, b, c = t
    return c, b, a


@case([1, 2, 3, 4, 5])
def unpack_star(xs):
    first, *middle, last = xs
    *init, tail = xs
    head, *rest = xs
    return first, middle, last, init, tail, head, rest


@case(((1, 2), [3, (4, 5)]))
def unpack_nested(t):
    (a, b), [c, (d, e)] = t
    return a + b + c + d + e


@case("xy")
def unpack_string(s):
    a, b = s
    return b + a


@case({"a": 1, "b": 2})
def unpack_dict_keys(d):
    x, y = d
    return x, y


@case((1, 2, 3))
def unpack_too_many(t):
    a, b = t
    return a


@case((1,))
def unpack_too_few(t):
    a, b = t
    return a


@case(5)
def unpack_non_iterable(x):
    a, b = x
    return a


@case([1])
def unpack_iterator_too_few(xs):
    a, b = iter(xs)


@case([1])
def unpack_star_too_few(xs):
    a, b, *c = xs


@case()
def swap_values():
    a, b = 1, 2
    a, b = b, a
    a, b, c = b, a, 3
    return a, b, c


# ----- calls --------------------------------------------------------------------------------------


def _callee(a, b=2, *args, c, d=4, **kwargs):
    return a, b, args, c, d, kwargs


@case()
def call_forms():
    return (
        _callee(1, c=3),
        _callee(1, 2, 3, 4, c=5, e=6),
        _callee(*[1, 2, 3], **{"c": 4, "z": 0}),
        _callee(1, *(2, 3), c=0, **{"d": 9}),
    )


@case()
def call_missing_args():
    return _callee()


@case()
def call_missing_kwonly():
    return _callee(1)


def _two(a, b):
    return a, b


def _posonly(a, b, /, c):
    return a, b, c


@case()
def call_too_many():
    return _two(1, 2, 3)


@case()
def call_unexpected_kw():
    return _two(1, 2, z=3)


@case()
def call_multiple_values():
    return _two(1, a=2)


@case()
def call_posonly():
    return _posonly(1, 2, c=3), _posonly(1, 2, 3)


@case()
def call_posonly_as_kw():
    return _posonly(1, b=2, c=3)


@case()
def call_missing_two():
    def f(a, b, c):
        return a

    return f(1)


@case()
def call_star_non_iterable():
    return _two(*1)


@case()
def call_kw_non_mapping():
    return _two(**1)


@case()
def call_kw_duplicate():
    return _callee(1, c=1, **{"c": 2})


def _defaults(x, items=None, *, scale=2):
    items = [] if items is None else items
    items.append(x * scale)
    return items


@case()
def defaults_and_kwonly():
    return _defaults(1), _defaults(2, [0]), _defaults(3, scale=10)


@case()
def lambdas():
    add = lambda a, b=10: a + b  # noqa: E731
    sq = lambda *xs: [x * x for x in xs]  # noqa: E731
    return add(1), add(1, 2), sq(1, 2, 3), (lambda: 42)()


@case(20)
def recursion(n):
    def fib(k):
        return k if k < 2 else fib(k - 1) + fib(k - 2)

    return fib(n)


def _fact(n):
    return 1 if n <= 1 else n * _fact(n - 1)


@case(10)
def global_recursion(n):
    return _fact(n)


@case()
def builtin_calls():
    xs = [3, 1, 2]
    return (sorted(xs), sorted(xs, key=lambda v: -v), max(xs), min(xs, default=0), sum(xs), len(xs), abs(-3),
            list(map(str, xs)), list(filter(None, [0, 1, 2])), isinstance(xs, list), any(xs), all(xs),
            round(2.567, 2), divmod(7, 2), list(zip(xs, "abc")), list(reversed(xs)), dict(a=1), set(xs))


@case()
def partial_calls():
    p = functools.partial(_callee, 1, c=3)
    return p(), p(5, d=6)


# ----- closures, nonlocal, globals ----------------------------------------------------------------


@case(3)
def closure_counter(n):
    def make():
        count = 0

        def inc():
            nonlocal count
            count += 1
            return count

        return inc

    inc = make()
    for _ in range(n):
        inc()
    return inc()


@case()
def nested_closures():
    x = 1

    def outer():
        y = 2

        def inner():
            nonlocal x
            x += y
            return x

        return inner

    f = outer()
    f()
    return f(), x


@case()
def closure_late_binding():
    fs = [lambda: i for i in range(3)]
    gs = [lambda i=i: i for i in range(3)]
    return [f() for f in fs], [g() for g in gs]


@case()
def unbound_free_variable():
    def f():
        return y

    result = f
    y = 1
    del y
    return result()


@case()
def unbound_local():
    if False:
        x = 1
    return x  # noqa: F821


@case()
def del_local():
    x = 1
    del x
    return x  # noqa: F821


GLOBAL_COUNTER = 0
GLOBAL_LIST = [1, 2]


@case()
def global_read():
    return GLOBAL_LIST[0] + len(GLOBAL_LIST)


@case()
def global_write():
    global GLOBAL_COUNTER
    GLOBAL_COUNTER += 1
    GLOBAL_COUNTER -= 1
    return GLOBAL_COUNTER


@case()
def name_error():
    return undefined_name  # noqa: F821


# ----- classes ------------------------------------------------------------------------------------


class Point:
    dims = 2

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm2(self):
        return self.x * self.x + self.y * self.y

    @property
    def swapped(self):
        return Point(self.y, self.x)

    @classmethod
    def origin(cls):
        return cls(0, 0)

    @staticmethod
    def add(a, b):
        return Point(a.x + b.x, a.y + b.y)

    def __add__(self, other):
        if not isinstance(other, Point):
            return NotImplemented
        return Point.add(self, other)

    def __radd__(self, other):
        if other == 0:
            return self
        return NotImplemented

    def __eq__(self, other):
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    def __lt__(self, other):
        return self.norm2() < other.norm2()

    def __repr__(self):
        return f"Point({self.x}, {self.y})"

    __hash__ = None


@case()
def class_basics():
    p = Point(3, 4)
    q = Point.origin()
    return p.norm2(), p.swapped, q, Point.add(p, p), Point.dims, p.dims, type(p).__name__


@case()
def operator_overloading():
    p, q = Point(1, 2), Point(3, 4)
    return p + q, sum([p, q]), p == Point(1, 2), p != q, p < q, q > p, sorted([q, p])


@case()
def operator_not_implemented():
    return Point(1, 2) + 5


@case()
def comparison_not_supported():
    return Point(1, 2) < 3


class Vec(Point):
    def __radd__(self, other):
        return "vec-radd"


@case()
def reflected_subclass_first():
    return Point(1, 1) + Vec(2, 2)


class Base:
    def __init__(self, v):
        self.v = v

    def describe(self):
        return f"Base({self.v})"

    @classmethod
    def make(cls, v):
        return cls(v)


class Derived(Base):
    def __init__(self, v, w):
        super().__init__(v)
        self.w = w

    def describe(self):
        return "Derived+" + super().describe()

    @classmethod
    def make(cls, v):
        return super().make(v)


class Derived2(Derived):
    def __init__(self, v):
        super(Derived2, self).__init__(v, v)


@case()
def super_calls():
    d = Derived(1, 2)
    e = Derived2(5)
    return d.describe(), d.w, e.describe(), e.w


@case()
def super_classmethod_error():
    return Derived.make(3)


class Lazy:
    def __init__(self):
        self.real = 1

    def __getattr__(self, name):
        if name.startswith("x"):
            return name * 2
        raise AttributeError(f"no {name}")


@case()
def getattr_hook():
    o = Lazy()
    return o.real, o.xy, getattr(o, "xz"), hasattr(o, "y"), getattr(o, "nope", "dflt")


@case()
def getattr_hook_raises():
    return Lazy().missing


@case()
def attribute_error_plain():
    return Point(1, 2).z


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self):
        self.a = 1


@case()
def slots_unset():
    s = Slotted()
    return s.a, s.b


class Temperature:
    def __init__(self):
        self._c = 0

    @property
    def celsius(self):
        return self._c

    @celsius.setter
    def celsius(self, value):
        if value < -273:
            raise ValueError("too cold")
        self._c = value

    @celsius.deleter
    def celsius(self):
        self._c = None


@case()
def property_setter_deleter():
    t = Temperature()
    t.celsius = 25
    a = t.celsius
    del t.celsius
    b = t.celsius
    try:
        t.celsius = -300
    except ValueError as e:
        return a, b, str(e)


@dataclasses.dataclass
class Item:
    name: str
    qty: int = 1
    tags: list = dataclasses.field(default_factory=list)

    def total(self, price):
        return self.qty * price


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: int


@case()
def dataclasses_usage():
    i = Item("x", 3)
    j = Item("y")
    j.tags.append("t")
    return i.total(2), j, i == Item("x", 3), dataclasses.asdict(j)


@case()
def frozen_dataclass_error():
    f = Frozen(1)
    f.a = 2


@case()
def class_defined_inside():
    class Acc:
        def __init__(self):
            self.items = []

        def add(self, x):
            self.items.append(x)
            return self

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i] * 10

        def __contains__(self, x):
            return x in self.items

        def __iter__(self):
            return iter(self.items)

        def __call__(self, k):
            return k in self

    a = Acc().add(1).add(2)
    return len(a), a[1], 2 in a, 5 in a, list(a), a(1), [x for x in a]


class Meta(type):
    def __call__(cls, *args):
        obj = super().__call__(*args)
        obj.created_by_meta = True
        return obj


class WithMeta(metaclass=Meta):
    def __init__(self, v):
        self.v = v


@case()
def metaclass_call():
    w = WithMeta(3)
    return w.v, w.created_by_meta


class Singleton:
    _inst = None

    def __new__(cls, *args):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __init__(self, v):
        self.v = v


@case()
def custom_new():
    a = Singleton(1)
    b = Singleton(2)
    Singleton._inst = None
    return a is b, a.v


@case()
def init_returns_value():
    class Bad:
        def __init__(self):
            return 1

    return Bad()


class MyError(Exception):
    def __init__(self, code):
        super().__init__(f"code {code}")
        self.code = code


@case()
def custom_exception_class():
    try:
        raise MyError(7)
    except MyError as e:
        return e.code, str(e), e.args


@case()
def setattr_delattr_builtins():
    p = Point(1, 2)
    setattr(p, "z", 3)
    delattr(p, "x")
    return hasattr(p, "x"), p.z, vars(p)


# ----- exceptions ---------------------------------------------------------------------------------


@case(0)
def try_except_else_finally(x):
    log = []
    try:
        log.append("try")
        r = 10 / x
    except ZeroDivisionError:
        log.append("except")
        r = None
    else:
        log.append("else")
    finally:
        log.append("finally")
    return log, r


@case()
def finally_overrides_return():
    def f():
        try:
            return "try"
        finally:
            return "finally"  # noqa: B012

    return f()


@case()
def finally_runs_on_exception():
    log = []

    def f():
        try:
            raise KeyError("k")
        finally:
            log.append("cleanup")

    try:
        f()
    except KeyError as e:
        log.append(repr(e))
    return log


@case()
def reraise_bare():
    try:
        try:
            {}["missing"]
        except KeyError:
            raise
    except LookupError as e:
        return type(e).__name__, str(e)


@case()
def exception_chaining_implicit():
    try:
        try:
            1 / 0
        except ZeroDivisionError:
            raise ValueError("while handling")
    except ValueError as e:
        return type(e.__context__).__name__, e.__cause__, e.__suppress_context__


@case()
def exception_chaining_explicit():
    try:
        try:
            int("x")
        except ValueError as inner:
            raise RuntimeError("outer") from inner
    except RuntimeError as e:
        return str(e.__cause__), e.__suppress_context__


@case()
def raise_from_none():
    try:
        try:
            1 / 0
        except ZeroDivisionError:
            raise KeyError("k") from None
    except KeyError as e:
        return e.__cause__, e.__suppress_context__, type(e.__context__).__name__


@case()
def escaping_chained_exception():
    try:
        [][1]
    except IndexError:
        raise TypeError("escapes with context")


@case()
def raise_class():
    raise ValueError


@case()
def raise_non_exception():
    raise 5


@case()
def except_tuple_and_order():
    out = []
    for exc in (KeyError("a"), IndexError("b"), TypeError("c")):
        try:
            raise exc
        except (KeyError, IndexError) as e:
            out.append(("lookup", str(e)))
        except Exception as e:
            out.append(("other", str(e)))
    return out


@case()
def exception_variable_cleared():
    try:
        raise ValueError("x")
    except ValueError as e:
        pass
    return "e" in dir()


@case()
def nested_try_in_loop():
    out = []
    for i in range(5):
        try:
            if i == 1:
                continue
            if i == 3:
                break
            out.append(i)
        finally:
            out.append(f"f{i}")
    return out


@case()
def return_in_finally_swallows():
    def f():
        try:
            raise ValueError
        finally:
            return "swallowed"  # noqa: B012

    return f()


@case()
def exc_info_inside_handler():
    import sys

    try:
        raise KeyError("k")
    except KeyError:
        t, v, _ = sys.exc_info()
        return t.__name__, str(v)


@case()
def native_exception_caught():
    try:
        int("not a number")
    except ValueError as e:
        return str(e)


@case()
def exception_in_native_callback_chain():
    try:
        sorted([3, "a"])
    except TypeError as e:
        return "caught", str(e)


@case()
def runtime_error_no_active():
    raise


# ----- with statements ----------------------------------------------------------------------------


class Recorder:
    def __init__(self, suppress=False):
        self.log = []
        self.suppress = suppress

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, typ, val, tb):
        self.log.append(("exit", typ.__name__ if typ else None))
        return self.suppress


@case()
def with_basic():
    r = Recorder()
    with r as got:
        got.log.append("body")
    return r.log, got is r


@case()
def with_suppress():
    r = Recorder(suppress=True)
    with r:
        raise ValueError("suppressed")
    return r.log


@case()
def with_propagate():
    r = Recorder()
    try:
        with r:
            raise KeyError("k")
    except KeyError:
        pass
    return r.log


@case()
def with_return_inside():
    r = Recorder()

    def f():
        with r:
            return "ret"

    return f(), r.log


@case()
def with_contextlib():
    log = []

    @contextlib.contextmanager
    def cm(tag):
        log.append(f"open {tag}")
        try:
            yield tag.upper()
        finally:
            log.append(f"close {tag}")

    with cm("a") as a, cm("b") as b:
        log.append(a + b)
    with contextlib.suppress(ZeroDivisionError):
        1 / 0
    try:
        with cm("c"):
            raise ValueError("inside")
    except ValueError as e:
        log.append(str(e))
    return log


@case()
def with_not_a_context_manager():
    with 5:
        pass


# ----- generators ---------------------------------------------------------------------------------


@case(5)
def generator_basic(n):
    def gen(k):
        for i in range(k):
            yield i * i
        return "done"

    g = gen(n)
    first = next(g)
    return first, list(g)


@case()
def generator_send():
    def acc():
        total = 0
        while True:
            x = yield total
            if x is None:
                break
            total += x
        return total

    g = acc()
    out = [next(g), g.send(1), g.send(5)]
    try:
        g.send(None)
    except StopIteration as e:
        out.append(e.value)
    return out


@case()
def generator_throw():
    def gen():
        try:
            yield 1
        except ValueError as e:
            yield f"caught {e}"
        yield 3

    g = gen()
    return next(g), g.throw(ValueError("boom")), next(g)


@case()
def generator_close():
    log = []

    def gen():
        try:
            yield 1
            yield 2
        finally:
            log.append("closed")

    g = gen()
    next(g)
    g.close()
    g.close()
    return log, list(g)


@case()
def generator_yield_from():
    def inner():
        x = yield "a"
        yield f"got {x}"
        return "inner-ret"

    def outer():
        r = yield from inner()
        yield r
        yield from [1, 2]

    g = outer()
    return [next(g), g.send("X"), next(g), next(g), next(g)]


@case()
def generator_yield_from_throw():
    def inner():
        try:
            yield 1
        except KeyError:
            yield "inner caught"
        return "r"

    def outer():
        r = yield from inner()
        yield r

    g = outer()
    return next(g), g.throw(KeyError("k")), next(g)


@case()
def generator_stopiteration_inside():
    def gen():
        yield 1
        raise StopIteration("bad")

    return list(gen())


@case()
def generator_expression_builtins():
    xs = [1, 2, 3, 4]
    return (sum(x * x for x in xs), any(x > 3 for x in xs), all(x > 0 for x in xs), tuple(x for x in xs if x % 2),
            max((x for x in xs), key=lambda v: -v), dict((x, str(x)) for x in xs))


@case()
def generator_exception_propagates():
    def gen():
        yield 1
        raise KeyError("from gen")

    return [x for x in gen()]


@case()
def generator_infinite_with_islice():
    import itertools

    def naturals():
        n = 0
        while True:
            yield n
            n += 1

    return list(itertools.islice(naturals(), 5))


# ----- comprehensions -----------------------------------------------------------------------------


@case([1, 2, 3, 4])
def comprehensions(xs):
    return ([x * 2 for x in xs if x > 1], {x: x * x for x in xs}, {x % 2 for x in xs},
            [(a, b) for a in xs for b in "ab" if a < 3], [[y for y in range(x)] for x in xs])


@case(3)
def comprehension_scoping(n):
    x = "outer"
    ys = [x for x in range(n)]
    return x, ys


@case(3)
def comprehension_closure(n):
    k = 10
    return [lambda: i + k for i in range(n)][0](), [(lambda j=i: j + k)() for i in range(n)]


# ----- strings, f-strings, walrus, match -----------------------------------------------------------


@case("World", 3.14159)
def f_strings(name, pi):
    width = 8
    return (f"Hello {name}!", f"{pi:.2f}", f"{name!r}", f"{name:>{width}}", f"{pi!s:.4}", f"{'a'!a}",
            f"{name=}", f"{{literal}}")


@case(" Hello, World ")
def string_methods(s):
    t = s.strip()
    return (t.lower(), t.upper(), t.split(", "), "-".join(["a", "b"]), t.replace("l", "L"), t.startswith("He"),
            t.find("W"), t[::-1], t.title(), "%s=%d" % ("x", 3), "{}+{}".format(1, 2), t.encode())


@case([5, 3, 8, 1])
def list_methods(xs):
    ys = list(xs)
    ys.append(10)
    ys.extend([0])
    ys.insert(1, 7)
    ys.remove(3)
    popped = ys.pop()
    ys.sort()
    ys.reverse()
    return ys, popped, ys.index(8), ys.count(1), xs.copy()


@case({"a": 1, "b": 2})
def dict_methods(d):
    e = dict(d)
    e["c"] = 3
    e.update({"d": 4})
    e.setdefault("a", 100)
    v = e.pop("b")
    return (sorted(e.items()), list(e.keys()), list(e.values()), e.get("zz", "none"), v, "a" in e,
            {**d, "z": 0}, {k: v for k, v in d.items()})


@case(list(range(10)))
def slicing(xs):
    ys = list(xs)
    ys[2:4] = ["a", "b", "c"]
    del ys[0]
    del ys[::3]
    return xs[2:5], xs[::2], xs[-3:], xs[::-1][:2], ys, xs[slice(1, 3)]


@case({"k": [1, 2]})
def del_statements(d):
    d = dict(d)
    del d["k"]
    x = [1, 2, 3]
    del x[1]
    return d, x


@case([1, 5, 2, 8])
def walrus(xs):
    out = []
    i = 0
    while (n := len(xs) - i) > 0:
        if (y := xs[i] * 2) > 4:
            out.append((n, y))
        i += 1
    return out, [z for x in xs if (z := x + 1) > 3]


@case()
def match_statements():
    def describe(v):
        match v:
            case 0:
                return "zero"
            case int(n) if n < 0:
                return f"neg {n}"
            case [x, y]:
                return f"pair {x} {y}"
            case [x, *rest]:
                return f"list starting {x} +{len(rest)}"
            case {"kind": "pt", "x": x, **others}:
                return f"pt {x} {others}"
            case Point(x=0, y=yy):
                return f"on y axis {yy}"
            case Item(name, qty):
                return f"item {name} {qty}"
            case str() | bytes():
                return "text"
            case _:
                return "other"

    values = [0, -5, [1, 2], [1, 2, 3], {"kind": "pt", "x": 1, "z": 2}, Point(0, 3), Item("n", 2), "s", 2.5]
    return [describe(v) for v in values]


@case()
def match_class_errors():
    match Point(1, 2):
        case Point(1, 2):
            return "positional without __match_args__"


@case(5)
def chained_method_calls(n):
    return " ".join(str(i) for i in range(n)).upper().split(" ")


@case()
def imports_inside():
    import math
    from collections import OrderedDict, defaultdict
    from os import path as osp

    d = defaultdict(int)
    d["a"] += 1
    return math.sqrt(16), OrderedDict(a=1), dict(d), osp.join("a", "b")


@case()
def import_error():
    from math import does_not_exist  # noqa: F401


@case()
def decorators():
    def twice(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*fn(*args, **kwargs), **kwargs)

        return wrapper

    @twice
    def swap(a, b):
        return b, a

    return swap(1, 2), swap.__name__


@case()
def iter_protocol_custom():
    class Countdown:
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return self

        def __next__(self):
            if self.n <= 0:
                raise StopIteration
            self.n -= 1
            return self.n

    return list(Countdown(3)), [x for x in Countdown(2)], sum(Countdown(4))


@case()
def iter_returns_non_iterator():
    class Bad:
        def __iter__(self):
            return 1

    for _ in Bad():
        pass


@case()
def enumerate_zip_reversed():
    xs = ["a", "b", "c"]
    return list(enumerate(xs, 1)), list(zip(xs, range(5))), list(reversed(xs)), [i for i, _ in enumerate(xs)]


@case()
def set_operations():
    a, b = {1, 2, 3}, {2, 3, 4}
    return a | b, a & b, a - b, a ^ b, a <= b, {1} < a, frozenset(a) == a


@case()
def bytes_and_numbers():
    return int("ff", 16), hex(255), 0.1 + 0.2, complex(1, 2) * 2, b"ab" + b"c", 2 ** 100, 7 // -2, -7 % 3


@case()
def is_and_in():
    xs = [1, 2]
    return 1 in xs, 3 not in xs, xs is xs, xs is not [1, 2], None is None, "a" in "abc"


@case()
def conditional_import_time_constants():
    consts = (1, "two", 3.0, None, True, (1, 2), frozenset({1}))
    return consts, ...


@case()
def mutual_recursion():
    def is_even(n):
        return True if n == 0 else is_odd(n - 1)

    def is_odd(n):
        return False if n == 0 else is_even(n - 1)

    return is_even(10), is_odd(7)


@case()
def staticmethod_and_classmethod_objects():
    class K:
        factor = 3

        @staticmethod
        def s(x):
            return x + 1

        @classmethod
        def c(cls, x):
            return x * cls.factor

    k = K()
    return K.s(1), k.s(2), K.c(2), k.c(3)


@case()
def keyword_argument_order():
    def f(**kw):
        return list(kw)

    return f(b=1, a=2, c=3)


@case()
def bound_method_objects():
    p = Point(2, 3)
    m = p.norm2
    ms = [p.norm2, Point(1, 1).norm2]
    return m(), [f() for f in ms], m.__self__ is p


@case()
def nonlocal_in_loop_closures():
    total = 0

    def add(v):
        nonlocal total
        total += v

    for i in range(5):
        add(i)
    return total


@case()
def stop_iteration_from_next_default():
    it = iter([])
    return next(it, "default")


@case()
def next_exhausted():
    it = iter([1])
    next(it)
    return next(it)


@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)


def test_case_count():
    assert len(CASES) >= 120
