"""Differential corpus: classes, class cells, super(), descriptors, properties, __getattr__, dataclasses.

PYTEST_DONT_REWRITE: the programs' own asserts are part of what is tested.
"""

import dataclasses
import functools

import pytest
from corpus_util import registry
from harness import check

CASES, case = registry()


class Base:
    tag = "base"

    def __init__(self, x):
        self.x = x

    def describe(self):
        return f"{type(self).__name__}({self.x})"

    @classmethod
    def make(cls, x):
        return cls(x)

    @staticmethod
    def helper(a, b=1):
        return a * b


class Child(Base):
    tag = "child"

    def __init__(self, x, y):
        super().__init__(x)
        self.y = y

    def describe(self):
        return super().describe() + f"+{self.y}"

    @classmethod
    def make(cls, x):
        return super().make(x) if cls is not Child else cls(x, 0)


@case()
def super_zero_arg_chain():
    c = Child(1, 2)
    return c.describe(), Child.make(5).describe(), c.helper(3, 4), Base.make(2).describe()


@case()
def super_two_arg_form():
    class A:
        def f(self):
            return "A"

    class B(A):
        def f(self):
            return "B" + super(B, self).f()

    class C(B):
        def f(self):
            return "C" + super(B, self).f()

    return C().f(), B().f()


@case()
def super_diamond_mro():
    class A:
        def who(self):
            return ["A"]

    class B(A):
        def who(self):
            return ["B"] + super().who()

    class C(A):
        def who(self):
            return ["C"] + super().who()

    class D(B, C):
        def who(self):
            return ["D"] + super().who()

    return D().who(), [k.__name__ for k in D.__mro__]


@case()
def super_attribute_not_method():
    class A:
        value = 10

    class B(A):
        value = 20

        def get(self):
            return super().value, self.value

    return B().get()


@case()
def super_missing_attribute():
    class A:
        pass

    class B(A):
        def get(self):
            return super().nothing

    return B().get()


@case()
def super_in_classmethod_and_new():
    class A:
        def __new__(cls, *args):
            inst = super().__new__(cls)
            inst.created = args
            return inst

    class B(A):
        def __new__(cls, v):
            return super().__new__(cls, v, "b")

    return B(1).created


@case()
def super_shadowed_name():
    def super():  # noqa: A001 - shadows the builtin on purpose
        return "mine"

    class A:
        def f(self):
            return super()

    return A().f()


@case()
def class_cell_dunder_class():
    class A:
        def which(self):
            return __class__

    class B(A):
        pass

    return A().which() is A, B().which() is A


@case()
def class_cell_closure_in_method():
    class A:
        def outer(self):
            def inner():
                return __class__.__name__

            return inner()

    return A().outer()


@case()
def class_body_scoping():
    x = "function"

    class C:
        x = "class"
        y = x

        def m(self):
            return x

    return C.y, C().m()


@case()
def class_attributes_and_instance_shadowing():
    class C:
        shared = []
        count = 0

        def __init__(self):
            self.shared.append(1)
            self.count += 1

    a, b = C(), C()
    return C.shared, C.count, a.count, b.count


@case()
def property_get_set_delete():
    class Temp:
        def __init__(self):
            self._c = 0
            self.log = []

        @property
        def celsius(self):
            self.log.append("get")
            return self._c

        @celsius.setter
        def celsius(self, v):
            if v < -273:
                raise ValueError("too cold")
            self.log.append("set")
            self._c = v

        @celsius.deleter
        def celsius(self):
            self.log.append("del")
            self._c = None

    t = Temp()
    t.celsius = 5
    v = t.celsius
    del t.celsius
    try:
        t.celsius = -300
    except ValueError as e:
        err = str(e)
    return v, t._c, t.log, err


@case()
def property_readonly():
    class P:
        @property
        def v(self):
            return 1

    p = P()
    p.v = 2


@case()
def property_raising_attributeerror_falls_to_getattr():
    class P:
        @property
        def v(self):
            raise AttributeError("inner")

        def __getattr__(self, name):
            return f"fallback {name}"

    return P().v


@case()
def descriptor_data_and_non_data():
    class Data:
        def __set_name__(self, owner, name):
            self.name = "_" + name

        def __get__(self, obj, objtype=None):
            if obj is None:
                return self
            return getattr(obj, self.name, "unset")

        def __set__(self, obj, value):
            setattr(obj, self.name, value * 2)

    class NonData:
        def __get__(self, obj, objtype=None):
            return "nondata"

    class C:
        d = Data()
        n = NonData()

    c = C()
    before = c.d
    c.d = 4
    c.__dict__["n"] = "instance wins"
    c.__dict__["d"] = "instance loses"
    return before, c.d, c.n, type(C.d).__name__


@case()
def descriptor_delete_and_class_access():
    class D:
        def __get__(self, obj, tp):
            return ("get", obj is None, tp.__name__)

        def __delete__(self, obj):
            obj.deleted = True

    class C:
        attr = D()

    c = C()
    del c.attr
    return C.attr, c.attr, c.deleted


@case()
def getattr_fallback_and_getattribute():
    class Lazy:
        def __init__(self):
            self.real = 1

        def __getattr__(self, name):
            if name.startswith("x"):
                return name * 2
            raise AttributeError(f"no {name}")

    class Spy:
        def __init__(self):
            self.log = []

        def __getattribute__(self, name):
            if name != "log":
                object.__getattribute__(self, "log").append(name)
            return object.__getattribute__(self, name)

    lz, s = Lazy(), Spy()
    s.a = 1
    _ = s.a
    return lz.real, lz.xy, getattr(lz, "nope", "default"), hasattr(lz, "zz"), s.log


@case()
def getattr_missing_message():
    class C:
        __slots__ = ("a",)

    c = C()
    return c.a


@case()
def setattr_delattr_hooks():
    class Rec:
        def __init__(self):
            object.__setattr__(self, "log", [])

        def __setattr__(self, k, v):
            self.log.append(("set", k, v))
            object.__setattr__(self, k, v)

        def __delattr__(self, k):
            self.log.append(("del", k))
            object.__delattr__(self, k)

    r = Rec()
    r.a = 1
    setattr(r, "b", 2)
    del r.a
    delattr(r, "b")
    return r.log


@case()
def slots_class():
    class P:
        __slots__ = ("x", "y")

        def __init__(self, x, y):
            self.x, self.y = x, y

    p = P(1, 2)
    try:
        p.z = 3
    except AttributeError as e:
        return p.x + p.y, str(e)


@case()
def dataclass_basics():
    @dataclasses.dataclass(order=True)
    class Point:
        x: int
        y: int = 0
        tags: list = dataclasses.field(default_factory=list)

        def norm1(self):
            return abs(self.x) + abs(self.y)

    a, b = Point(1, 2), Point(1, 3, ["t"])
    return a < b, a == Point(1, 2), repr(a), a.norm1(), dataclasses.asdict(b), repr(dataclasses.replace(a, y=9))


@case()
def dataclass_frozen_and_post_init():
    @dataclasses.dataclass(frozen=True)
    class F:
        a: int
        b: int = dataclasses.field(default=0, compare=False)

    @dataclasses.dataclass
    class G:
        a: int
        double: int = dataclasses.field(init=False)

        def __post_init__(self):
            self.double = self.a * 2

    f = F(1)
    try:
        f.a = 2
    except dataclasses.FrozenInstanceError as e:
        err = type(e).__name__
    return hash(f) == hash(F(1, 5)), err, G(4).double


@case()
def dataclass_missing_arg():
    @dataclasses.dataclass
    class D:
        a: int
        b: str

    return D(1)


@case()
def operator_overloading_full():
    class V:
        def __init__(self, *c):
            self.c = c

        def __add__(self, o):
            return V(*(a + b for a, b in zip(self.c, o.c)))

        def __mul__(self, k):
            return V(*(a * k for a in self.c))

        __rmul__ = __mul__

        def __neg__(self):
            return V(*(-a for a in self.c))

        def __eq__(self, o):
            return isinstance(o, V) and self.c == o.c

        def __hash__(self):
            return hash(self.c)

        def __len__(self):
            return len(self.c)

        def __getitem__(self, i):
            return self.c[i]

        def __iter__(self):
            return iter(self.c)

        def __contains__(self, x):
            return x in self.c

        def __bool__(self):
            return any(self.c)

        def __repr__(self):
            return f"V{self.c}"

    a = V(1, 2)
    b = V(3, 4)
    return repr(a + b), repr(2 * a), repr(a * 3), repr(-a), a == V(1, 2), len(a), a[1], list(a), 2 in a, \
        bool(V(0, 0)), {a: 1}[V(1, 2)]


@case()
def reflected_and_notimplemented():
    class L:
        def __add__(self, o):
            return NotImplemented

    class R:
        def __radd__(self, o):
            return "radd"

    class Neither:
        pass

    r = L() + R()
    try:
        L() + Neither()
    except TypeError as e:
        return r, str(e)


@case()
def rich_comparison_fallbacks():
    class A:
        def __init__(self, v):
            self.v = v

        def __lt__(self, o):
            return self.v < o.v

        def __eq__(self, o):
            return self.v == o.v

    a, b = A(1), A(2)
    return a < b, b > a, a == A(1), a != b, sorted([A(3), A(1)], key=lambda x: x.v)[0].v


@case()
def comparison_unsupported():
    class A:
        pass

    return A() < A()


@case()
def inplace_dunder_and_fallback():
    class Acc:
        def __init__(self):
            self.items = []

        def __iadd__(self, x):
            self.items.append(x)
            return self

    class OnlyAdd:
        def __init__(self, v):
            self.v = v

        def __add__(self, o):
            return OnlyAdd(self.v + o)

    a = Acc()
    a += 1
    a += 2
    o = OnlyAdd(1)
    o2 = o
    o += 5
    return a.items, o.v, o2.v, o is o2


@case()
def call_dunder_and_callable():
    class Adder:
        def __init__(self, n):
            self.n = n

        def __call__(self, x, *, twice=False):
            return (x + self.n) * (2 if twice else 1)

    add = Adder(3)
    return add(1), add(1, twice=True), callable(add), callable(3)


@case()
def metaclass_new_and_init_subclass():
    class Registry(type):
        classes = []

        def __new__(mcs, name, bases, ns):
            cls = super().__new__(mcs, name, bases, ns)
            mcs.classes.append(name)
            return cls

    class Plugin:
        registered = []

        def __init_subclass__(cls, key=None, **kw):
            super().__init_subclass__(**kw)
            Plugin.registered.append((cls.__name__, key))

    class A(metaclass=Registry):
        pass

    class B(Plugin, key="b"):
        pass

    class C(B):
        pass

    return Registry.classes[-1:], Plugin.registered


@case()
def class_getitem_and_generic_alias():
    class Box:
        def __class_getitem__(cls, item):
            return f"Box[{item.__name__}]"

    return Box[int], list[int] == list[int], str(dict[str, int])


@case()
def abstract_class_instantiation():
    import abc

    class Shape(abc.ABC):
        @abc.abstractmethod
        def area(self):
            ...

    class Sq(Shape):
        def area(self):
            return 4

    try:
        Shape()
    except TypeError as e:
        return Sq().area(), "abstract" in str(e)


@case()
def isinstance_issubclass_hooks():
    class Meta(type):
        def __instancecheck__(cls, obj):
            return obj == "special"

    class Special(metaclass=Meta):
        pass

    return isinstance("special", Special), isinstance(1, Special), issubclass(bool, int), isinstance(1, (str, int))


@case()
def functools_cached_property_and_total_ordering():
    @functools.total_ordering
    class N:
        computed = 0

        def __init__(self, v):
            self.v = v

        def __eq__(self, o):
            return self.v == o.v

        def __lt__(self, o):
            return self.v < o.v

        @functools.cached_property
        def square(self):
            N.computed += 1
            return self.v * self.v

    n = N(3)
    return n.square, n.square, N.computed, N(1) <= N(2), N(3) >= N(4)


@case()
def instance_dict_and_vars():
    class C:
        def __init__(self):
            self.a = 1
            self.b = [2]

    c = C()
    vars(c)["z"] = 3
    return sorted(vars(c)), c.z, c.__dict__ is vars(c)


@case()
def method_objects_identity():
    class C:
        def m(self):
            return self

    c = C()
    bm = c.m
    return bm() is c, bm.__self__ is c, bm.__func__ is C.m, C.m(c) is c


@case()
def str_repr_format_dunders():
    class T:
        def __str__(self):
            return "str-T"

        def __repr__(self):
            return "repr-T"

        def __format__(self, spec):
            return f"fmt[{spec}]"

    t = T()
    return str(t), repr(t), f"{t}", f"{t!r}", f"{t!s}", f"{t:>5}", format(t, "x"), repr([t])


@case()
def class_with_classvar_counter():
    class Counter:
        instances = 0

        def __init__(self):
            type(self).instances += 1

    class Sub(Counter):
        pass

    Counter(), Counter(), Sub()
    return Counter.instances, Sub.instances


@case()
def enum_usage():
    import enum

    class Color(enum.Enum):
        RED = 1
        GREEN = 2

    return Color.RED.name, repr(Color(2)), [c.value for c in Color], Color["GREEN"] is Color.GREEN


@case()
def namedtuple_usage():
    import collections

    P = collections.namedtuple("P", "x y")
    p = P(1, y=2)
    x, y = p
    return p, p._replace(x=5), x + y, p._asdict(), p.x


@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)
