"""Differential corpus: ``except*`` / exception groups (3.11+) and PEP 695 type parameters (3.12+).

The programs use syntax older versions cannot parse, so they are source strings compiled with exec
into this module only on versions that have it (the file imports everywhere).

PYTEST_DONT_REWRITE: the programs' own asserts are part of what is tested.
"""

import sys
import types  # noqa: F401 - used by the programs compiled below

import pytest
from corpus_util import registry
from harness import check

CASES, case = registry()


class MyError(Exception):
    pass


def _compile_cases(source, label):
    exec(compile(source, f"<corpus {label}>", "exec"), globals())


def describe(e):
    """A comparable picture of an exception (groups: their nested structure)."""
    if isinstance(e, BaseException) and hasattr(e, "exceptions"):
        return (type(e).__name__, e.message, [describe(x) for x in e.exceptions])
    return repr(e)


EXCEPT_STAR = r'''
@case()
def eg_split_match():
    out = []
    try:
        raise ExceptionGroup("g", [ValueError(1), TypeError(2), ValueError(3)])
    except* ValueError as e:
        out.append(("value", describe(e)))
    except* TypeError as e:
        out.append(("type", describe(e)))
    return out


@case()
def eg_unmatched_part_is_reraised():
    try:
        try:
            raise ExceptionGroup("g", [ValueError(1), KeyError("k"), OSError(2)])
        except* ValueError:
            pass
        except* OSError as e:
            seen = describe(e)
    except ExceptionGroup as rest:
        return seen, describe(rest)


@case()
def eg_unmatched_part_escapes():
    try:
        raise ExceptionGroup("escaping", [ValueError(1), KeyError("k")])
    except* ValueError:
        pass


@case()
def eg_everything_handled_returns():
    hits = 0
    try:
        raise ExceptionGroup("g", [ValueError(1), TypeError(2)])
    except* (ValueError, TypeError) as e:
        hits += len(e.exceptions)
    return hits, "after"


@case()
def eg_nested_groups():
    out = []
    try:
        try:
            raise ExceptionGroup("outer", [
                ValueError(1),
                ExceptionGroup("inner", [TypeError(2), ValueError(3), ExceptionGroup("deep", [KeyError(4)])]),
            ])
        except* ValueError as e:
            out.append(describe(e))
        except* KeyError as e:
            out.append(describe(e))
    except ExceptionGroup as rest:
        out.append(describe(rest))
    return out


@case()
def eg_raise_inside_except_star():
    try:
        try:
            raise ExceptionGroup("g", [ValueError(1), TypeError(2)])
        except* ValueError as e:
            raise KeyError("new") from None
    except ExceptionGroup as result:
        first = result.exceptions[0]
        return describe(result), first.__suppress_context__, describe(first.__context__)


@case()
def eg_raise_inside_except_star_escapes():
    try:
        raise ExceptionGroup("g", [ValueError(1), TypeError(2)])
    except* ValueError:
        raise RuntimeError("replaced")


@case()
def eg_raise_in_two_clauses():
    try:
        try:
            raise ExceptionGroup("g", [ValueError(1), TypeError(2), OSError(3)])
        except* ValueError:
            raise KeyError("a")
        except* TypeError:
            raise IndexError("b")
    except ExceptionGroup as result:
        return describe(result), [describe(x.__context__) for x in result.exceptions[:2]]


@case()
def eg_bare_raise_keeps_original_group():
    try:
        try:
            raise ExceptionGroup("orig", [ValueError(1), TypeError(2)])
        except* ValueError:
            raise
    except ExceptionGroup as result:
        return describe(result)


@case()
def eg_raise_match_object_is_a_new_raise():
    try:
        try:
            raise ExceptionGroup("orig", [ValueError(1), TypeError(2)])
        except* ValueError as e:
            raise e
    except ExceptionGroup as result:
        return describe(result)


@case()
def eg_naked_exception_wrapped():
    try:
        raise ValueError("naked")
    except* ValueError as e:
        out = describe(e), describe(e.exceptions[0])
    return out


@case()
def eg_naked_exception_unmatched_escapes():
    try:
        raise KeyError("nobody catches me")
    except* ValueError:
        pass
    return "wrong"


@case()
def eg_naked_exception_reraised():
    try:
        try:
            raise ValueError("x")
        except* ValueError:
            raise
    except ExceptionGroup as e:
        return describe(e)


@case()
def eg_naked_raise_new_escapes():
    try:
        raise ValueError("first")
    except* ValueError:
        raise TypeError("second")


@case()
def eg_exc_info_is_the_match():
    try:
        raise ExceptionGroup("g", [ValueError(1), TypeError(2)])
    except* TypeError:
        inside = describe(sys.exc_info()[1]), sys.exc_info()[0].__name__
    except* ValueError:
        pass
    return inside, sys.exc_info()


@case()
def eg_except_star_group_type_rejected():
    try:
        try:
            raise ExceptionGroup("g", [ValueError(1)])
        except* ExceptionGroup:
            pass
        return "unreachable"
    except TypeError as e:
        return str(e)


@case()
def eg_except_star_not_an_exception_class():
    try:
        try:
            raise ExceptionGroup("g", [ValueError(1)])
        except* int:
            pass
        return "unreachable"
    except TypeError as e:
        return str(e)


class MyGroup(ExceptionGroup):
    def derive(self, excs):
        return MyGroup(self.message + "+", excs)


@case()
def eg_subclass_derive_used_for_split():
    out = []
    try:
        try:
            raise MyGroup("mine", [ValueError(1), MyError("m")])
        except* MyError as e:
            out.append(describe(e))
    except ExceptionGroup as rest:
        out.append(describe(rest))
    return out


@case()
def eg_base_exception_group():
    try:
        try:
            raise BaseExceptionGroup("b", [KeyboardInterrupt(), ValueError(1)])
        except* ValueError as e:
            kind = type(e).__name__
    except BaseExceptionGroup as rest:
        return kind, describe(rest)


@case()
def eg_nested_try_inside_except_star():
    out = []
    try:
        raise ExceptionGroup("g", [ValueError(1), TypeError(2)])
    except* ValueError:
        try:
            raise ExceptionGroup("inner", [KeyError(3)])
        except* KeyError as inner:
            out.append(describe(inner))
        out.append("after inner")
    except* TypeError:
        out.append("type")
    return out


@case()
def eg_finally_and_context():
    log = []
    try:
        try:
            raise ExceptionGroup("g", [ValueError(1), OSError(2)])
        except* ValueError:
            log.append("handled")
        finally:
            log.append("finally")
    except ExceptionGroup as rest:
        log.append(describe(rest))
    return log


@case()
def eg_native_error_inside_except_star():
    try:
        try:
            raise ExceptionGroup("g", [ValueError(1)])
        except* ValueError:
            {}["missing"]
    except ExceptionGroup as result:
        inner = result.exceptions[0]
        return describe(result), describe(inner.__context__)


@case(3)
def eg_in_generator(n):
    def gen():
        for i in range(n):
            try:
                raise ExceptionGroup("g", [ValueError(i), TypeError(i)])
            except* ValueError as e:
                yield describe(e)
            except* TypeError as e:
                yield describe(e)

    return list(gen())


@case()
def eg_add_note_and_reraise():
    eg = ExceptionGroup("noted", [ValueError(1), TypeError(2)])
    eg.add_note("a note")
    try:
        try:
            raise eg
        except* ValueError:
            raise
    except ExceptionGroup as result:
        return describe(result), result.__notes__
'''

TYPE_PARAMS = r'''
@case(5)
def generic_function_and_type_params(x):
    def ident[T](a: T) -> T:
        return a

    (t,) = ident.__type_params__
    return ident(x), t.__name__, type(t).__name__, ident.__annotations__["a"] is t, t.__infer_variance__


@case()
def generic_function_bounds_and_constraints():
    def f[T: int, U: (str, bytes), *Ts, **P](a: T, b: U) -> tuple[T, U]:
        return a, b

    t, u, ts, p = f.__type_params__
    return (f(1, "s"), [type(x).__name__ for x in f.__type_params__], t.__bound__, u.__constraints__,
            ts.__name__, p.__name__, repr(f.__annotations__["return"]))


@case()
def generic_bound_is_lazy():
    def f[T: Later]():
        return 1

    (t,) = f.__type_params__
    try:
        t.__bound__
    except NameError as e:
        first = str(e)

    class Later:
        pass

    return first, f()


@case()
def generic_class_subscript_and_methods():
    class Box[T]:
        def __init__(self, v: T):
            self.v = v

        def get(self) -> T:
            return self.v

        def map[U](self, fn) -> "Box[U]":
            return Box(fn(self.v))

    b = Box(3).map(lambda v: v * 2)
    (t,) = Box.__type_params__
    return (b.get(), t.__name__, [c.__name__ for c in Box.__mro__], repr(Box[int]).rsplit(".", 1)[1],
            Box.map.__type_params__[0].__name__, repr(Box.__orig_bases__[0]).rsplit(".", 1)[-1])


@case()
def generic_class_with_bases_and_constraints():
    class Pair[K: str, V: (int, float)](dict[K, V]):
        def keys_sorted(self):
            return sorted(self)

    p = Pair(b=1, a=2.0)
    k, v = Pair.__type_params__
    return p.keys_sorted(), k.__bound__, v.__constraints__, Pair.__bases__


@case()
def generic_class_wrong_arity():
    class One[T]:
        pass

    try:
        One[int, str]
    except TypeError as e:
        return str(e).replace(One.__qualname__, "One")


@case()
def type_alias_plain_and_generic():
    type IntList = list[int]
    type Mapping[K, V] = dict[K, list[V]]
    return (IntList.__name__, IntList.__value__, IntList.__type_params__, type(IntList).__name__,
            Mapping.__name__, [p.__name__ for p in Mapping.__type_params__], repr(Mapping[str, int]).split(".")[-1],
            repr(Mapping.__value__))


@case()
def type_alias_is_lazy():
    type Forward = Later

    class Later:
        pass

    return Forward.__value__ is Later, Forward.__module__ == __name__


@case()
def type_alias_error_when_evaluated():
    type Broken = undefined_name_xyz
    try:
        Broken.__value__
    except NameError as e:
        return str(e)


@case()
def generic_type_params_visible_in_closure():
    def outer[T](x: T):
        def inner() -> T:
            return x

        return inner

    inner = outer(7)
    return inner(), inner.__annotations__["return"].__name__, outer.__type_params__[0].__name__


@case()
def generic_method_defined_in_class():
    class C:
        def m[T: (int, str)](self, x: T) -> T:
            return x * 2

    return C().m(4), C().m("ab"), C.m.__type_params__[0].__constraints__


def _scope_code(source, *names):
    code = compile(source, "<annotation scopes>", "exec")
    for name in names:
        code = next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == name)
    return code


_ALIAS_IN_CLASS = _scope_code("""
def f():
    class C[T]:
        x = 1
        type A = list[T, x, int]
    return C
""", "f", "<generic parameters of C>", "C", "A")


@case()
def annotation_scope_reads_class_namespace():
    # The value of a type alias defined in a class body reads the class namespace first
    # (LOAD_FROM_DICT_OR_DEREF / LOAD_FROM_DICT_OR_GLOBALS), then the type-param cell / globals.
    results = []
    for classdict in ({"x": 10, "T": "from dict", "int": "shadowed"}, {"x": 20}):
        cells = {"T": types.CellType("from cell"), "__classdict__": types.CellType(classdict)}
        closure = tuple(cells[name] for name in _ALIAS_IN_CLASS.co_freevars)
        fn = types.FunctionType(_ALIAS_IN_CLASS, globals(), "A", None, closure)
        results.append(repr(fn()))
    return results
'''

TYPE_PARAM_DEFAULTS = r'''
@case()
def type_param_defaults():
    def f[T = int, *Ts = *tuple[str, ...], **P = [int, str]]():
        return 1

    class Box[U: int = bool]:
        pass

    t, ts, p = f.__type_params__
    (u,) = Box.__type_params__
    return (f(), t.__default__, repr(ts.__default__), p.__default__, u.__default__, u.__bound__,
            t.has_default(), repr(Box[int]).rsplit(".", 1)[-1])
'''

if sys.version_info >= (3, 11):
    _compile_cases(EXCEPT_STAR, "except*")
if sys.version_info >= (3, 12):
    _compile_cases(TYPE_PARAMS, "type params")
if sys.version_info >= (3, 13):
    _compile_cases(TYPE_PARAM_DEFAULTS, "type param defaults")


@pytest.mark.skipif(sys.version_info < (3, 11), reason="except* is 3.11+")
@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)


def test_cases_per_version():
    names = [p.id for p in CASES]
    assert len(set(names)) == len(names)
    expected = 0
    if sys.version_info >= (3, 11):
        expected += EXCEPT_STAR.count("@case(")
    if sys.version_info >= (3, 12):
        expected += TYPE_PARAMS.count("@case(")
    if sys.version_info >= (3, 13):
        expected += TYPE_PARAM_DEFAULTS.count("@case(")
    assert len(names) == expected
