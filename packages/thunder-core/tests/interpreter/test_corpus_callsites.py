"""Differential corpus: call-site layouts and small-opcode corners that differ across bytecode versions
(3.13: callable/self_or_NULL, CALL_KW, superinstructions, TO_BOOL, COMPARE_OP bool bit).

PYTEST_DONT_REWRITE: the programs' own asserts are part of what is tested.
"""

import pytest
from corpus_util import registry
from harness import check

CASES, case = registry()


class A:
    def m(self, *a, **k): return a, k
    def __init__(self, x=0, **kw): self.x = x; self.kw = kw
class B(A):
    def __init__(self, **kw):
        super().__init__(x=5, **kw)
@case()
def callsite_method_kw_and_star_forms():
    a = A()
    return a.m(1, k=2), a.m(*[1, 2], **{"z": 3}), a.m(*(), k=1, **{"j": 2}), B(q=1).kw, B().x
@case()
def callsite_method_duplicate_keyword():
    a = A()
    return a.m(k=1, **{"k": 2})
@case()
def callsite_yield_from_throw_inside_try():
    def inner():
        try:
            yield 1
        except KeyError:
            yield "inner caught"
        return "r"
    def outer():
        try:
            r = yield from inner()
            yield r
        except ValueError:
            yield "outer"
    g = outer()
    return [next(g), g.throw(KeyError), next(g), g.throw(ValueError)]
@case()
def callsite_superinstruction_locals():
    x = 1
    y = x; z = y  # STORE_FAST_LOAD_FAST
    a, b = z, x
    return (lambda: a + b)(), [a for a in range(2)], a
@case()
def callsite_to_bool_and_jumps(n=3):
    s = 0
    i = 0
    while i < n:
        i += 1
        if i == 2 and not s > 5 or i is None:
            continue
        s += i
    return s, n if n else -1, 1 if [] else 2
@case()
def callsite_display_unpacking_and_format():
    import operator
    t = (1, 2)
    return [*t, *range(2)], {**{"a": 1}, "b": 2}, {*t}, f"{t!s:>10}" , operator.itemgetter(1)(t)
@case()
def callsite_all_parameter_kinds():
    def f(a, b=1, /, c=2, *d, e, f=3, **g): return a, b, c, d, e, f, g
    return f(1, e=0), f(1, 2, 3, 4, 5, e=6, h=7)
@case()
def callsite_compare_non_bool_result():
    class C:
        def __eq__(self, o): return "truthy-str"
    r = []
    if C() == 1: r.append("eq")
    r.append(C() == 1)
    return r


@pytest.mark.parametrize("fn, args, kwargs", CASES)
def test_program(fn, args, kwargs):
    check(fn, *args, **kwargs)
