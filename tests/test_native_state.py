"""Outside state reached through native code, compared with eager over several calls.

Statements called as functions (``operator.setitem(d, k, v)``, ``object.__setattr__``, ``list.append(lst, x)``,
``d.update(k=v)``) are the statements: their writes are replayed on every call. Native objects keeping state in C
(Python's and numpy's random generators, iterators and generators, deques) and functions changing an outside list
in C (``heapq``) or giving a new result per call (``time.perf_counter``) are refused, naming the call and the line:
run once while tracing, every later call would reuse their result (they were silently stale before).
"""

import bisect
import collections
import functools
import heapq
import itertools
import operator
import random
import time

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError


class Holder:
    pass


def _state():
    holder = Holder()
    holder.n = 0
    return {"o": holder, "l": [0], "d": {"n": 0}, "s": {0}}


# body of f(x) (which returns x * its value), what to compare after each call
SUPPORTED = {
    "operator.setitem on a dict": ("operator.setitem(d, 'n', d['n'] + 1); v = d['n']", "d"),
    "operator.setitem on a list": ("operator.setitem(l, 0, l[0] + 1); v = l[0]", "l"),
    "operator.delitem": ("l.append(len(l)); operator.delitem(l, 0); v = len(l)", "l"),
    "operator.getitem of a changing dict": ("v = operator.getitem(d, 'n'); d['n'] += 2", "d"),
    "operator.iadd on a list": ("operator.iadd(l, [1]); v = len(l)", "l"),
    "object.__setattr__": ("object.__setattr__(o, 'n', o.n + 1); v = o.n", "o.n"),
    "bound __setattr__": ("o.__setattr__('n', o.n + 1); v = o.n", "o.n"),
    "object.__delattr__": ("o.m = 1; object.__delattr__(o, 'm'); v = hasattr(o, 'm') + o.n", "vars(o)"),
    "bound list __setitem__": ("l.__setitem__(0, l[0] + 1); v = l[0]", "l"),
    "list.__setitem__": ("list.__setitem__(l, 0, l[0] + 1); v = l[0]", "l"),
    "bound dict __setitem__": ("d.__setitem__('n', d['n'] + 1); v = d['n']", "d"),
    "dict.__setitem__": ("dict.__setitem__(d, 'n', d['n'] + 1); v = d['n']", "d"),
    "dict.__delitem__": ("d['m'] = 1; dict.__delitem__(d, 'm'); v = len(d)", "d"),
    "list.append called on the class": ("list.append(l, 1); v = len(l)", "l"),
    "set.add called on the class": ("set.add(s, len(s)); v = len(s)", "s"),
    "dict.update with keywords": ("d.update(n=d['n'] + 1); v = d['n']", "d"),
    "dict.update with a dict and keywords": ("d.update({'a': 1}, n=d['n'] + 1); v = d['n'] + d['a']", "d"),
    "dict.update on the class with keywords": ("dict.update(d, n=d['n'] + 1); v = d['n']", "d"),
    "__dict__.update with keywords": ("o.__dict__.update(n=o.n + 1); v = o.n", "o.n"),
    "next over an iterator made inside": ("it = iter(l); v = next(it) + next(it, 5); l.append(1)", "l"),
}


def _program(body):
    state = _state()
    namespace = {**state, "operator": operator}
    exec(f"def f(x):\n    {body}\n    return x * v\n", namespace)
    return namespace["f"], namespace


@pytest.mark.parametrize("case", list(SUPPORTED))
def test_statements_called_as_functions_are_replayed_like_eager(case):
    body, compared = SUPPORTED[case]
    eager, eager_ns = _program(body)
    fn, ns = _program(body)
    jfn = thunder.jit(fn)
    x = torch.randn(3)
    for call in range(3):
        expected = eager(x)
        actual = jfn(x)
        torch.testing.assert_close(actual, expected, msg=f"call {call}")
        assert eval(compared, ns) == eval(compared, eager_ns), f"call {call}"


def _rng_instance():
    rng = random.Random(0)
    return lambda x: x * rng.random(), "rng.random()"


def _random_module():
    return lambda x: x * random.random(), "random.random()"


def _shuffle():
    order = [0, 1, 2]
    return lambda x: x[order] if random.shuffle(order) is None else x, "random.shuffle(order)"


def _numpy_generator():
    np = pytest.importorskip("numpy")
    rng = np.random.RandomState(0)
    return lambda x: x * float(rng.rand()), "rng.rand()"


def _counter():
    count = itertools.count()
    return lambda x: x * next(count), "next(count)"


def _outside_iterator():
    batches = iter([1.0, 2.0, 3.0, 4.0])
    return lambda x: x * next(batches), "next(batches)"


def _outside_generator():
    def numbers():
        n = 0
        while True:
            n += 1
            yield n

    gen = numbers()

    def f(x):
        for n in gen:
            return x * n

    return f, "for n in gen:"


def _heap():
    heap = []

    def f(x):
        heapq.heappush(heap, 1)
        return x * len(heap)

    return f, "heapq.heappush(heap, 1)"


def _insort():
    seen = []

    def f(x):
        bisect.insort(seen, 1)
        return x * len(seen)

    return f, "bisect.insort(seen, 1)"


def _deque():
    recent = collections.deque(maxlen=3)

    def f(x):
        recent.append(1)
        return x * len(recent)

    return f, "recent.append(1)"


def _clock():
    return lambda x: x * (time.perf_counter() % 1), "time.perf_counter()"


REFUSED = {
    "a random.Random": (_rng_instance, "Random.random()"),
    "the random module": (_random_module, "Random.random()"),
    "random.shuffle of an outside list": (_shuffle, "Python's random number generator"),
    "a numpy RandomState": (_numpy_generator, "RandomState.rand()"),
    "itertools.count": (_counter, "next()"),
    "an outside iterator": (_outside_iterator, "next()"),
    "an outside generator": (_outside_generator, "next()"),
    "heapq on an outside list": (_heap, "heappush()"),
    "bisect.insort on an outside list": (_insort, "insort_right()"),
    "an outside deque": (_deque, "deque.append()"),
    "the clock": (_clock, "time.perf_counter()"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_native_state_from_outside_is_refused_at_the_users_line(case):
    make, call = REFUSED[case]
    fn, line = make()
    with pytest.raises(UnsupportedError) as raised:
        thunder.jit(fn)(torch.randn(3))
    message = str(raised.value)
    assert call in message
    assert line in message  # the user's own line
    assert "every" in message  # why: it would not be repeated on every call


def test_native_state_made_inside_the_call_runs_as_eager():
    def f(x):
        rng = random.Random(len(x))  # made on every call: the program makes the same draws again
        recent = collections.deque([1, 2])
        recent.append(rng.randint(0, 9))
        count = itertools.count(3)
        return x * sum(recent) + next(count)

    jfn = thunder.jit(f)
    for n in (3, 3, 4):
        x = torch.randn(n)
        torch.testing.assert_close(jfn(x), f(x))


def test_library_bookkeeping_with_counters_and_the_clock_is_not_refused():
    # torch.autograd.Function numbers its classes with next(itertools.count()); logging stamps records with
    # time.time(): neither is on the user's line nor computed with
    import logging

    log = logging.getLogger("thunder-test-native-state")
    log.propagate = False

    def f(x):
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        log.info("rows %d", x.shape[0])
        return Double.apply(x)

    x = torch.randn(3)
    torch.testing.assert_close(thunder.jit(f)(x), f(x))
    # the Function's own backward, as eager's
    grads = []
    for fn in (f, thunder.jit(f)):
        leaf = x.clone().requires_grad_()
        fn(leaf).sum().backward()
        grads.append(leaf.grad)
    torch.testing.assert_close(grads[1], grads[0])


class Config:
    def __init__(self):
        self.n = 1

    def __repr__(self):
        return f"Config(n={self.n})"

    def __lt__(self, other):
        return self.n < other.n


# native code that calls the class's Python methods or reads attributes behind the interpreter's back: the first
# call's answer was reused (body returning (tensor, value); the change made between calls)
CALLBACKS = {
    "repr of an object": ("repr(cfg)", "cfg.n += 1"),
    "str of an object": ("str(cfg)", "cfg.n += 1"),
    "an f-string": ("f'{cfg} {cfg!r:>12}'", "cfg.n += 1"),
    "format of an object": ("format(cfg)", "cfg.n += 1"),
    "str of a list of objects": ("str(cfgs)", "cfgs[0].n += 1"),
    "repr of a dict of objects": ("repr({'a': cfgs[0], 'b': (cfgs[1],)})", "cfgs[1].n += 1"),
    "str of a growing list": ("str(cfgs)", "cfgs.append(Config())"),
    "sorted by __lt__": ("sorted(cfgs)[0].n", "cfgs[0].n -= 3"),
    "max with a key": ("max(cfgs, key=lambda c: c.n).n", "cfgs[0].n += 3"),
    "min with a key and two arguments": ("min(cfgs[0], cfgs[1], key=lambda c: -c.n).n", "cfgs[1].n += 3"),
    "max by __lt__": ("max(cfgs).n", "cfgs[1].n += 3"),
    "operator.attrgetter": ("operator.attrgetter('n')(cfg)", "cfg.n += 1"),
    "a dotted attrgetter": ("operator.attrgetter('inner.n', 'n')(cfg)", "cfg.inner.n += 1"),
    "operator.itemgetter": ("operator.itemgetter('k')(d)", "d['k'] += 1"),
    "copy.copy": ("copy.copy(cfg).n", "cfg.n += 1"),
    "copy.deepcopy": ("copy.deepcopy(cfg).inner.n", "cfg.inner.n += 1"),
    "functools.reduce": ("functools.reduce(lambda a, c: a + c.n, cfgs, 0)", "cfgs[0].n += 1"),
    "list.sort with a key": ("(lambda l: (l.sort(key=lambda c: -c.n), l[0].n)[1])(list(cfgs))", "cfgs[1].n += 3"),
    "percent formatting": ("'%s and %r' % (cfg, cfgs)", "cfg.n += 1"),
    "percent formatting with a mapping": ("'%(a)s' % {'a': cfg}", "cfg.n += 1"),
    "str.format": ("'{} {!r:>12} {c.inner.n}'.format(cfg, cfg, c=cfg)", "cfg.inner.n += 1; cfg.n += 1"),
}


class Counted:
    def __init__(self):
        self.n = 1

    def __len__(self):
        return self.n

    def __bool__(self):
        return self.n > 1

    def __int__(self):
        return self.n

    def __float__(self):
        return self.n / 2

    def __index__(self):
        return self.n

    def __hash__(self):
        return self.n

    def __abs__(self):
        return -self.n

    def __round__(self, ndigits=None):
        return self.n + 10


class Sized:
    def __init__(self):
        self.n = 0

    def __len__(self):
        return self.n


# builtins that call one Python dunder of their argument, and the truth test: natively the dunder's reads were
# unchecked and the first call's answer reused
PROTOCOLS = {
    "len": "len(c)",
    "bool": "bool(c)",
    "if": "1 if c else 2",
    "not": "not c",
    "and": "(c and 5) or 7",
    "truth by __len__": "1 if s else 2",
    "int": "int(c)",
    "float": "float(c)",
    "hash": "hash(c)",
    "abs": "abs(c)",
    "round": "round(c)",
    "operator.index": "operator.index(c)",
    "a list indexed by it": "[10, 11, 12, 13, 14, 15][c]",
    "range": "len(range(c))",
}


@pytest.mark.parametrize("case", list(PROTOCOLS))
def test_builtins_calling_a_python_dunder_read_like_eager(case):
    def program():
        namespace = {"c": Counted(), "s": Sized(), "operator": operator}
        exec(f"def f(x):\n    return x * 2, {PROTOCOLS[case]}\n", namespace)
        return namespace

    eager_ns, ns = program(), program()
    jfn = thunder.jit(ns["f"])
    x = torch.randn(2)
    for call in range(3):
        expected, actual = eager_ns["f"](x), jfn(x)
        assert actual[1] == expected[1], f"call {call}"
        # eager's type too: `not c` is a bool, `int(c)` an int (1 == True would hide a wrong one)
        assert type(actual[1]) is type(expected[1]), f"call {call}"
        torch.testing.assert_close(actual[0], expected[0])
        for namespace in (eager_ns, ns):
            namespace["c"].n += 1
            namespace["s"].n += 1


def _callback_program(body):
    import copy

    cfg = Config()
    cfg.inner = Config()
    cfgs = [Config(), Config()]
    cfgs[1].n = 0
    namespace = {"cfg": cfg, "cfgs": cfgs, "d": {"k": 1}, "operator": operator, "copy": copy, "Config": Config,
                 "functools": functools}
    exec(f"def f(x):\n    return x * 2, {body}\n", namespace)
    return namespace


@pytest.mark.parametrize("case", list(CALLBACKS))
def test_native_code_calling_back_into_python_reads_like_eager(case):
    body, change = CALLBACKS[case]
    eager_ns, ns = _callback_program(body), _callback_program(body)
    jfn = thunder.jit(ns["f"])
    x = torch.randn(2)
    for call in range(3):
        expected, actual = eager_ns["f"](x), jfn(x)
        torch.testing.assert_close(actual[0], expected[0])
        assert actual[1] == expected[1], f"call {call}"
        assert type(actual[1]) is type(expected[1]), f"call {call}"
        exec(change, eager_ns)
        exec(change, ns)


# ---------------------------------------------------------------------------------------------
# functools.lru_cache functions
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _cached_positions(n):
    return torch.arange(n).float()


@functools.lru_cache
def _cached_scaled(n, s):
    return torch.ones(n) * s


_LOG = []


@functools.lru_cache
def _cached_and_logged(n):
    _LOG.append(n)
    return n * 2


@functools.lru_cache
def _cached_of_anything(value):
    return 1


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_an_lru_cache_function_making_tensors_runs_its_body_as_eager_would(cache):
    def fn(x, s):
        return x * _cached_positions(x.shape[0]) + _cached_scaled(x.shape[0], s)

    jfn = thunder.jit(fn, cache=cache)
    for n, s in ((3, 1.0), (4, 2.0), (3, 2.0), (5, 1.0)):
        x = torch.randn(n)
        torch.testing.assert_close(jfn(x, s), fn(x, s), rtol=0, atol=0)


def test_an_lru_cache_function_of_plain_values_runs_natively_as_in_eager():
    # its body runs once per distinct argument, as eager's (a library's is_torch_available() writes its globals)
    _LOG.clear()
    _cached_and_logged.cache_clear()
    jfn = thunder.jit(lambda x: x * _cached_and_logged(x.shape[0]))
    for n in (2, 3, 2, 2, 3):
        torch.testing.assert_close(jfn(torch.ones(n)), torch.ones(n) * n * 2)
    assert _LOG == [2, 3]


def test_an_lru_cache_function_of_a_symbolic_number_writing_outside_state_is_refused():
    _LOG.clear()
    with pytest.raises(UnsupportedError, match="_cached_and_logged, a functools.lru_cache function, writes outside"):
        thunder.jit(lambda x: x * _cached_and_logged(x.shape[0]), cache="symbolic values")(torch.ones(2))
    assert _LOG == []  # the write is not left behind


def test_an_lru_cache_function_called_with_an_unhashable_argument_raises_eagers_error():
    def fn(x):
        return x * _cached_of_anything([1])

    with pytest.raises(TypeError) as eager:
        fn(torch.ones(2))
    with pytest.raises(TypeError) as jitted:
        thunder.jit(fn)(torch.ones(2))
    assert str(jitted.value) == str(eager.value)
