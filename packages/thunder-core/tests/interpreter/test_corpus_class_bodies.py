"""Differential corpus: class statements inside interpreted functions (interpreted class bodies).

Class bodies run in interpreted frames through the ``__build_class__`` lookaside: name opcodes on
the class namespace, closures / globals / builtins, comprehensions (inlined into the class body on
3.12+), ``__class__`` cells, metaclasses with ``__prepare__``, ``__init_subclass__``,
``__set_name__``, dataclasses, enums, annotations, class decorators and the error paths of
``__build_class__``. The tests at the end check that the body is visible to hooks.

PYTEST_DONT_REWRITE: the programs' own asserts are part of what is tested.
"""

import abc
import collections
import dataclasses
import enum
import functools
import sys
import typing

import pytest
from corpus_util import registry
from harness import check

from thunder.interpreter import Hooks, interpret
from thunder.interpreter.provenance import Provenance

CASES, case = registry()

SCALE = 3
PREFIX = "g"
k = "global k"


# ----- names: globals, closures, builtins ---------------------------------------------------------


@case(4)
def body_reads_globals_closures_builtins(n):
    local = n * 2

    class A:
        a = SCALE * n
        b = local + 1
        c = len([1, 2, 3]) + abs(-n)
        d = PREFIX + str(local)
        e = max(a, b)  # class-level names read back

    return A.a, A.b, A.c, A.d, A.e, sorted(k for k in vars(A) if not k.startswith("__"))


@case()
def body_name_both_class_and_closure():
    # x is free in the body (method m uses it) and assigned there: LOAD_CLASSDEREF / LOAD_FROM_DICT_OR_DEREF.
    x = "closure"

    class A:
        a = x
        x = "class"
        b = x

        def m(self):
            return x

    return A.a, A.b, A().m(), A.x


@case()
def body_assigned_name_skips_closure():
    # Assigned only in the body (not free there): LOAD_NAME goes to globals, not the function's x.
    x = "closure"  # noqa: F841

    class A:
        try:
            a = SCALE_MISSING  # noqa: F821
        except NameError as e:
            a = str(e)
        SCALE_MISSING = 1  # noqa: F841
        k2 = k

    return A.a, A.k2


@case()
def body_shadows_builtin_and_global():
    class A:
        len = lambda self: 42  # noqa: E731
        n = len("abc")
        SCALE = 100
        s = SCALE

    return A.n, A.s, A().len(), SCALE


@case()
def body_delete_and_rebind():
    class A:
        tmp = 1
        kept = tmp + 1
        del tmp
        try:
            del tmp
        except NameError as e:
            err = str(e)
        tmp2 = 5
        tmp2 += 1

    return hasattr(A, "tmp"), A.kept, A.err, A.tmp2


@case()
def body_control_flow():
    class A:
        items = []
        for i in range(4):
            if i % 2:
                items.append(i)
            else:
                items.append(-i)
        while len(items) < 6:
            items.append(0)
        try:
            1 / 0
        except ZeroDivisionError as exc:
            caught = type(exc).__name__
        finally:
            fin = True
        with _Ctx() as ctx:
            inside = ctx
        match items:
            case [a, b, *rest]:
                matched = (a, b, len(rest))

    return A.items, A.i, A.caught, A.fin, A.inside, A.matched, hasattr(A, "exc")


class _Ctx:
    def __enter__(self):
        return "entered"

    def __exit__(self, *a):
        return False


@case()
def body_locals_and_vars():
    class A:
        a = 1
        b = 2
        snapshot = sorted(locals())
        via_vars = sorted(vars())
        names = dir()
        locals()["injected"] = 3

    return A.snapshot, A.via_vars, A.names, A.injected


@case()
def body_qualname_module_doc():
    class A:
        """doc of A"""

        q = __qualname__
        m = __module__

        class B:
            q = __qualname__

    return A.q, A.m == __name__, A.__doc__, A.B.q, A.B.__qualname__, A.__name__


@case()
def body_imports():
    class A:
        import math
        from os import path as p
        pi = math.pi
        j = p.join("a", "b")

    return A.pi, A.j, A.math.__name__


# ----- comprehensions and scopes (3.11 functions vs 3.12 inlining) ----------------------------------


@case(3)
def comprehension_iterable_uses_class_names(n):
    class A:
        xs = [1, 2, 3]
        doubled = [x * 2 for x in xs]
        pairs = {x: n * x for x in xs}
        sq = {x * x for x in xs}
        total = sum(x for x in xs)
        nested = [[x + y for y in range(2)] for x in xs]

    return A.doubled, A.pairs, sorted(A.sq), A.total, A.nested


@case()
def comprehension_cannot_see_class_names():
    class A:
        k = "class k"
        xs = [1, 2]
        seen = [k for _ in xs]  # class scope invisible: the global k
        try:
            bad = [xs for _ in range(1)]  # noqa: F841
        except NameError as e:
            err = str(e)

    return A.seen, A.err


@case()
def comprehension_iteration_var_does_not_leak():
    class A:
        i = "class i"
        v = [i for i in range(3)]
        after = i
        d = {i: i for i in "ab"}
        after2 = i

    return A.v, A.after, A.d, A.after2, hasattr(A, "_")


@case(10)
def comprehension_sees_function_closure(n):
    offset = n

    class A:
        vals = [offset + i for i in range(3)]
        gen = list(offset - i for i in range(2))
        lam = (lambda: offset)()

    return A.vals, A.gen, A.lam


@case()
def comprehension_in_class_with_class_cell():
    class A:
        names = [f"n{i}" for i in range(2)]

        def who(self):
            return __class__.__name__, [__class__.__name__ for _ in range(1)]

    return A.names, A().who()


@case()
def comprehension_error_inside_class_body():
    class A:
        try:
            vals = [1 // (i - 1) for i in range(3)]  # noqa: F841
        except ZeroDivisionError as e:
            err = str(e)
        after = [i for i in range(2)]

    return A.err, A.after


# ----- __class__ and super() ------------------------------------------------------------------------


@case()
def methods_super_and_class_cell():
    class Base:
        def greet(self):
            return "base"

        @classmethod
        def make(cls):
            return ("made", cls.__name__)

    class Child(Base):
        def greet(self):
            return "child+" + super().greet()

        @classmethod
        def make(cls):
            return super().make() + ("child",)

        @staticmethod
        def cls_name():
            return __class__.__name__

        def klass(self):
            return __class__

    c = Child()
    return c.greet(), Child.make(), Child.cls_name(), c.klass() is Child, "__classcell__" in vars(Child)


@case()
def super_in_init_chain():
    class A:
        def __init__(self, x):
            self.log = ["A"]
            self.x = x

    class B(A):
        def __init__(self, x):
            super().__init__(x + 1)
            self.log.append("B")

    class C(B):
        def __init__(self):
            super().__init__(10)
            self.log.append("C")

    c = C()
    return c.x, c.log, [t.__name__ for t in C.__mro__]


@case()
def class_cell_in_nested_classes():
    class Outer:
        def outer(self):
            return __class__.__name__

        class Inner:
            def inner(self):
                return __class__.__qualname__

    return Outer().outer(), Outer.Inner().inner()


# ----- nested classes -------------------------------------------------------------------------------


@case(2)
def nested_classes_and_closures(n):
    def make(tag):
        class Outer:
            label = tag

            class Inner:
                doubled = n * 2

                def get(self):
                    return (tag, n)

            def inner(self):
                return self.Inner().get()

        return Outer

    A, B = make("a"), make("b")
    return A.label, B.label, A().inner(), B.Inner.doubled, A.Inner is not B.Inner, A.Inner.__qualname__


@case()
def class_defined_in_loop():
    classes = []
    for i in range(3):
        class C:
            idx = i

            def get(self):
                return self.idx * 10

        classes.append(C)
    return [c.idx for c in classes], [c().get() for c in classes], len(set(classes))


@case()
def class_inheriting_from_local_and_builtin():
    class MyList(list):
        def total(self):
            return sum(self)

    class MyDict(dict):
        def __missing__(self, key):
            return key * 2

    ml = MyList([1, 2, 3])
    md = MyDict(a=1)
    return ml.total(), md["a"], md["zz"], isinstance(ml, list)


# ----- metaclasses ----------------------------------------------------------------------------------


class RecordingNamespace:
    """A non-dict mapping returned by __prepare__: records every access."""

    def __init__(self):
        self.data = {}
        self.log = []

    def __getitem__(self, key):
        self.log.append(("get", key))
        return self.data[key]

    def __setitem__(self, key, value):
        self.log.append(("set", key))
        self.data[key] = value

    def __delitem__(self, key):
        self.log.append(("del", key))
        del self.data[key]


@case()
def metaclass_prepare_custom_mapping():
    class Meta(type):
        @classmethod
        def __prepare__(mcs, name, bases, **kw):
            return RecordingNamespace()

        def __new__(mcs, name, bases, ns, **kw):
            cls = super().__new__(mcs, name, bases, dict(ns.data))
            cls.log = [entry for entry in ns.log if not entry[1].startswith("__")]
            return cls

    class A(metaclass=Meta):
        x = 1
        y = x + 1
        del x
        z = len("ab")

    return A.log, A.y, A.z, hasattr(A, "x"), type(A).__name__


@case()
def metaclass_prepare_ordered_dict_subclass():
    class Namespace(dict):
        def __init__(self):
            super().__init__()
            self.order = []

        def __setitem__(self, key, value):
            if key in self and not key.startswith("__"):
                raise TypeError(f"duplicate {key!r}")
            self.order.append(key)
            super().__setitem__(key, value)

    class Meta(type):
        @classmethod
        def __prepare__(mcs, name, bases):
            return Namespace()

        def __new__(mcs, name, bases, ns):
            cls = super().__new__(mcs, name, bases, dict(ns))
            cls.order = [k for k in ns.order if not k.startswith("__")]
            return cls

    class A(metaclass=Meta):
        b = 1
        a = 2

        def m(self):
            return self.a

    try:
        class Bad(metaclass=Meta):
            a = 1
            a = 2  # noqa: F811
    except TypeError as e:
        err = str(e)
    return A.order, A().m(), err


@case()
def metaclass_kwargs_init_and_call():
    log = []

    class Meta(type):
        def __new__(mcs, name, bases, ns, **kw):
            log.append(("new", name, sorted(kw)))
            return super().__new__(mcs, name, bases, ns)

        def __init__(cls, name, bases, ns, **kw):
            log.append(("init", name, kw.get("flag")))
            super().__init__(name, bases, ns)
            cls.flag = kw.get("flag")

        def __call__(cls, *args, **kwargs):
            log.append(("call", cls.__name__, args))
            return super().__call__(*args, **kwargs)

    class A(metaclass=Meta, flag=True, other=1):
        def __init__(self, v):
            self.v = v

    class B(A, flag="b", other=2):
        pass

    return log, A.flag, B.flag, B(5).v, log[-1], type(B) is Meta


@case()
def metaclass_is_a_function():
    def meta(name, bases, ns, **kw):
        ns = dict(ns)
        ns["made_by"] = ("meta", name, tuple(b.__name__ for b in bases), sorted(kw))
        return type(name, bases, ns)

    class A(metaclass=meta, extra=1):
        x = 1

    class B(A):  # the metaclass of B is type(A), i.e. type
        pass

    return A.made_by, A.x, B.made_by, type(B).__name__


@case()
def metaclass_most_derived_wins():
    class M1(type):
        pass

    class M2(M1):
        pass

    class A(metaclass=M1):
        pass

    class B(metaclass=M2):
        pass

    class C(A, B):  # most derived metaclass: M2
        pass

    class D(B, metaclass=M1):  # explicit M1 loses to M2
        pass

    return type(C).__name__, type(D).__name__


@case()
def metaclass_conflict():
    class M1(type):
        pass

    class M2(type):
        pass

    class A(metaclass=M1):
        pass

    class B(metaclass=M2):
        pass

    class C(A, B):
        pass


@case()
def metaclass_abc_and_abstract_methods():
    class Shape(abc.ABC):
        @abc.abstractmethod
        def area(self):
            ...

    class Square(Shape):
        def __init__(self, s):
            self.s = s

        def area(self):
            return self.s ** 2

    try:
        Shape()
    except TypeError as e:
        err = type(e).__name__
    return Square(3).area(), err, sorted(Shape.__abstractmethods__), isinstance(Square(1), Shape)


@case()
def prepare_returns_non_mapping():
    class Meta(type):
        @classmethod
        def __prepare__(mcs, name, bases):
            return 42

    class A(metaclass=Meta):
        pass


@case()
def prepare_of_function_metaclass_non_mapping():
    def meta(name, bases, ns):
        return None

    meta.__prepare__ = lambda name, bases: [1]
    try:
        class A(metaclass=meta):
            pass
    except TypeError as e:
        return str(e)
    return "no error"


@case()
def metaclass_none():
    class A(metaclass=None):
        pass


@case()
def classcell_not_propagated():
    class Meta(type):
        def __new__(mcs, name, bases, ns):
            ns = {k: v for k, v in ns.items() if k != "__classcell__"}
            return super().__new__(mcs, name, bases, ns)

    class A(metaclass=Meta):
        def m(self):
            return __class__


@case()
def classcell_set_to_other_class():
    class Meta(type):
        def __new__(mcs, name, bases, ns):
            super().__new__(mcs, name, bases, dict(ns))  # sets the __class__ cell to this class
            return super().__new__(mcs, name + "2", bases, {})

    class A(metaclass=Meta):
        def m(self):
            return __class__


@case()
def classcell_metaclass_returns_non_class():
    class Meta(type):
        def __new__(mcs, name, bases, ns):
            return ("not a class", name)

    class A(metaclass=Meta):
        def m(self):
            return __class__

    return A


# ----- __init_subclass__, __set_name__, __mro_entries__ -------------------------------------------


@case()
def init_subclass_hooks():
    registry_ = []

    class Plugin:
        def __init_subclass__(cls, /, name=None, **kw):
            super().__init_subclass__(**kw)
            registry_.append((cls.__name__, name))
            cls.plugin_name = name or cls.__name__.lower()

    class A(Plugin, name="alpha"):
        pass

    class B(Plugin):
        pass

    class C(A, name="gamma"):
        pass

    try:
        class D(Plugin, bogus=1):
            pass
    except TypeError as e:
        err = str(e)
    return registry_, A.plugin_name, B.plugin_name, C.plugin_name, err


@case()
def set_name_descriptors():
    class Field:
        def __init__(self, default):
            self.default = default

        def __set_name__(self, owner, name):
            self.owner = owner.__name__
            self.name = name
            self.private = "_" + name

        def __get__(self, obj, objtype=None):
            if obj is None:
                return self
            return getattr(obj, self.private, self.default)

        def __set__(self, obj, value):
            setattr(obj, self.private, value * 2)

    class Model:
        x = Field(1)
        y = Field("d")

    m = Model()
    m.x = 5
    return (Model.x.name, Model.x.owner, Model.y.private, m.x, m.y, sorted(vars(m)))


@case()
def set_name_raises():
    class Bad:
        def __set_name__(self, owner, name):
            raise ValueError(f"no {name}")

    class A:
        attr = Bad()


@case()
def mro_entries_custom_and_typing():
    class Proxy:
        def __init__(self, *targets):
            self.targets = targets

        def __mro_entries__(self, bases):
            return self.targets

    class P:
        def p(self):
            return "p"

    class Q:
        def q(self):
            return "q"

    class A(Proxy(P, Q)):
        pass

    T = typing.TypeVar("T")

    class Box(typing.Generic[T]):
        def __init__(self, item: T):
            self.item = item

    class IntBox(Box[int]):
        pass

    class Point(typing.NamedTuple):
        x: int
        y: int = 0

    return ([b.__name__ for b in A.__bases__], A().p() + A().q(), len(A.__orig_bases__),
            Box(3).item, [b.__name__ for b in IntBox.__bases__], IntBox.__orig_bases__[0] == Box[int],
            Point(1), Point(1, 2)._asdict(), "__orig_bases__" in vars(P))


@case()
def mro_entries_returns_non_tuple():
    class Proxy:
        def __mro_entries__(self, bases):
            return [object]

    class A(Proxy()):
        pass


@case()
def bad_base_not_a_class():
    class A("not a class"):
        pass


@case()
def bad_base_int_instance():
    class A(1):
        pass


@case()
def bad_bases_duplicate():
    class B:
        pass

    class A(B, B):
        pass


@case()
def bad_bases_mro_conflict():
    class X:
        pass

    class Y(X):
        pass

    class Z(X, Y):
        pass


@case()
def bad_base_final_bool():
    class A(bool):
        pass


# ----- dataclasses, enums, namedtuples ----------------------------------------------------------------


@case(2)
def dataclass_defined_inside(n):
    @dataclasses.dataclass
    class Point:
        x: int
        y: int = n
        tags: list = dataclasses.field(default_factory=list)

        def norm1(self):
            return abs(self.x) + abs(self.y)

    @dataclasses.dataclass(frozen=True, order=True)
    class Version:
        major: int
        minor: int = 0

    p = Point(3)
    p.tags.append("t")
    try:
        Version(1).major = 2
    except dataclasses.FrozenInstanceError as e:
        frozen = type(e).__name__
    return (repr(p), p.norm1(), p == Point(3, n, ["t"]), repr(sorted([Version(1, 2), Version(1), Version(0, 9)])),
            frozen, [f.name for f in dataclasses.fields(Point)], Point.__annotations__)


@case()
def dataclass_inheritance_and_post_init():
    @dataclasses.dataclass
    class Base:
        a: int

        def __post_init__(self):
            self.total = self.a

    @dataclasses.dataclass
    class Derived(Base):
        b: int = 1

        def __post_init__(self):
            super().__post_init__()
            self.total += self.b

    d = Derived(2, 3)
    return repr(d), d.total, dataclasses.asdict(d)


@case()
def dataclass_field_order_error():
    @dataclasses.dataclass
    class Bad:
        x: int = 0
        y: int


@case()
def enum_defined_inside():
    class Color(enum.Enum):
        RED = 1
        GREEN = 2
        BLUE = enum.auto()

        def describe(self):
            return f"{self.name}={self.value}"

    class Perm(enum.IntFlag):
        R = 4
        W = 2
        X = 1

    class Num(enum.IntEnum):
        ONE = 1
        TWO = 2

    return ([c.describe() for c in Color], Color(2).name, Color["BLUE"].value, int(Perm.R | Perm.W),
            Perm.R in (Perm.R | Perm.X), Num.TWO + 1, sorted(Num.__members__), Color.RED is Color(1))


@case()
def enum_duplicate_member_error():
    class E(enum.Enum):
        A = 1
        A = 2  # noqa: F811


@case()
def enum_with_methods_and_aliases():
    class Planet(enum.Enum):
        MERCURY = (3.303e23, 2.4397e6)
        EARTH = (5.976e24, 6.37814e6)
        TERRA = (5.976e24, 6.37814e6)  # alias

        def __init__(self, mass, radius):
            self.mass = mass
            self.radius = radius

        @property
        def density_rank(self):
            return round(self.mass / self.radius ** 3)

    return [p.name for p in Planet], Planet.TERRA is Planet.EARTH, Planet.EARTH.density_rank


@case()
def namedtuple_subclass_inside():
    class P(collections.namedtuple("PBase", "x y")):
        __slots__ = ()

        def swap(self):
            return P(self.y, self.x)

    return P(1, 2).swap(), P._fields, P.__mro__[1].__name__


# ----- annotations --------------------------------------------------------------------------------


@case(7)
def annotations_in_class_body(n):
    class A:
        a: int
        b: "str" = "x"
        c: list[int] = [n]
        d: n * 2 = 1  # annotations are evaluated (no __future__ import here)

    return A.__annotations__, A.b, A.c, A.d, hasattr(A, "a")


@case()
def annotations_complex_targets_not_recorded():
    class Holder:
        pass

    class A:
        h = Holder()
        h.attr: int = 5
        items = [0]
        items[0]: str = "s"
        (paren): int = 3  # noqa: F821

    return A.__annotations__, A.h.attr, A.items, A.paren


@case()
def annotations_prepare_mapping():
    class Meta(type):
        @classmethod
        def __prepare__(mcs, name, bases):
            return RecordingNamespace()

        def __new__(mcs, name, bases, ns):
            cls = super().__new__(mcs, name, bases, dict(ns.data))
            cls.ann_log = [e for e in ns.log if e[1] == "__annotations__"]
            return cls

    class A(metaclass=Meta):
        x: int = 1
        y: str

    return A.ann_log, A.__annotations__, A.x


@case()
def annotations_preset_in_namespace():
    class A:
        __annotations__ = {"pre": 1}
        x: int = 0

    return A.__annotations__


# ----- decorators, slots, properties --------------------------------------------------------------


@case()
def class_decorators():
    log = []

    def register(tag):
        def deco(cls):
            log.append((tag, cls.__name__))
            cls.tag = tag
            return cls

        return deco

    def replace(cls):
        return ("replaced", cls.__name__)

    @register("outer")
    @register("inner")
    class A:
        pass

    @replace
    class B:
        pass

    @functools.total_ordering
    class V:
        def __init__(self, v):
            self.v = v

        def __eq__(self, o):
            return self.v == o.v

        def __lt__(self, o):
            return self.v < o.v

    return log, A.tag, B, V(1) >= V(0), V(1) <= V(0)


@case()
def slots_and_properties():
    class P:
        __slots__ = ("_x", "y")

        def __init__(self, x):
            self._x = x
            self.y = 0

        @property
        def x(self):
            return self._x

        @x.setter
        def x(self, v):
            self._x = v * 10

    p = P(1)
    p.x = 2
    try:
        p.z = 1
    except AttributeError as e:
        err = type(e).__name__
    return p.x, p.y, err, P.__slots__


@case()
def class_with_dunder_methods():
    class Vec:
        def __init__(self, *xs):
            self.xs = xs

        def __add__(self, o):
            return Vec(*(a + b for a, b in zip(self.xs, o.xs)))

        def __eq__(self, o):
            return self.xs == o.xs

        def __len__(self):
            return len(self.xs)

        def __iter__(self):
            return iter(self.xs)

        def __repr__(self):
            return f"Vec{self.xs}"

    v = Vec(1, 2) + Vec(3, 4)
    return repr(v), len(v), list(v), v == Vec(4, 6)


# ----- errors in the class body -------------------------------------------------------------------


@case()
def name_error_in_class_body():
    class A:
        x = undefined_name  # noqa: F821


@case()
def name_error_caught_outside():
    try:
        class A:
            ok = 1
            bad = ok + missing  # noqa: F821
    except NameError as e:
        return str(e), type(e).__name__
    return "no error"


@case()
def exception_in_body_chained():
    try:
        try:
            raise KeyError("first")
        except KeyError:
            class A:
                raise ValueError("from body")
    except ValueError as e:
        return str(e), repr(e.__context__)


@case()
def unbound_classderef():
    def outer():
        class A:
            v = later

            def m(self):
                return later

        later = 1  # noqa: F841
        return A

    return outer()


@case()
def init_subclass_raises():
    class Base:
        def __init_subclass__(cls, **kw):
            raise RuntimeError(f"no subclass {cls.__name__}")

    class A(Base):
        pass


@case()
def build_class_called_directly():
    def body():
        pass

    out = []
    for args in [(), (body,), (1, "A"), (body, 1)]:
        try:
            __build_class__(*args)  # noqa: F821
        except TypeError as e:
            out.append(str(e))
    return out


# 3.12+: annotation scopes in class bodies read the class namespace through the __classdict__ cell
# (LOAD_LOCALS + STORE_DEREF __classdict__, LOAD_FROM_DICT_OR_DEREF); source compiled only there.
PEP695_IN_CLASS_BODIES = r'''
@case()
def class_body_type_alias_reads_class_names():
    class A:
        Item = int
        type Items = list[Item]
        type Later = Missing

        def first[T](self, xs: list[T]) -> T:
            return xs[0]

    return (A.Items.__value__, A.first.__type_params__[0].__name__, A().first([4, 5]), A.Items.__name__,
            A.first.__annotations__["return"].__name__)


@case()
def class_body_type_alias_missing_name():
    class A:
        type Later = Missing  # noqa: F821

    return A.Later.__value__


@case()
def generic_class_with_body_names():
    class Box[T]:
        default = 0
        vals = [default for _ in range(2)]

        def get(self, x: T) -> T:
            return x

    return Box.vals, Box().get(3), Box.__type_params__[0].__name__, Box[int].__origin__ is Box
'''

if sys.version_info >= (3, 12):
    exec(compile(PEP695_IN_CLASS_BODIES, "<corpus class bodies 3.12>", "exec"), globals())


@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)


# ----- the class body is visible to hooks ---------------------------------------------------------


TRACKED = {"value": 5}


def _uses_global_in_body():
    class A:
        v = TRACKED["value"] + 1
        n = len("abcd")

    return A.v, A.n


def test_class_body_reads_are_inputs():
    seen = []

    class Recorder(Hooks):
        def on_input(self, value, provenance):
            seen.append(provenance.to_source())
            return value

    assert interpret(_uses_global_in_body, hooks=Recorder()) == (6, 4)
    assert any("TRACKED" in s for s in seen), seen
    assert any("len" in s for s in seen), seen


def test_class_body_calls_go_through_lookasides():
    calls = []

    class Hook(Hooks):
        def lookaside(self, fn):
            if fn is len:
                def fake_len(x):
                    calls.append(x)
                    return 99

                return fake_len
            return None

    assert interpret(_uses_global_in_body, hooks=Hook()) == (6, 99)
    assert calls == ["abcd"]


def _probe(value):
    return value


def test_class_body_stores_keep_provenance():
    def fn(x):
        class A:
            kept = x
            same = _probe(kept)

        return A.same

    seen = []

    class Hook(Hooks):
        def wrapped_lookaside(self, fn):
            if fn is _probe:
                def probe(w):
                    seen.append(w.provenance)
                    return w

                return probe
            return None

    # The argument stored into the class namespace and read back by LOAD_NAME keeps its provenance.
    assert interpret(fn, (3,), hooks=Hook()) == 3
    assert seen == [Provenance.arg(0)], seen


def test_should_interpret_false_runs_body_natively():
    class Native(Hooks):
        def should_interpret(self, fn):
            return fn.__name__ != "A"

        def on_input(self, value, provenance):
            assert "TRACKED" not in provenance.to_source()
            return value

    assert interpret(_uses_global_in_body, hooks=Native()) == (6, 4)


def test_corpus_has_cases_for_each_topic():
    names = [p.id for p in CASES]
    assert len(names) == len(set(names))
    assert len(names) >= 50, len(names)
    assert sys.version_info[:2] >= (3, 10)
