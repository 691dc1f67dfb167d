"""Python values read from tensor data (docs/values-from-tensor-data.md): the program is split at the read, each
segment an ordinary trace, gradients and in-place updates as in eager, a new value a new continuation."""

import warnings

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError
from thunder.frontend import segments as segments_module
from thunder.frontend.segments import ContinuationLimitWarning


def _leaves(xs):
    return [x.detach().clone().requires_grad_(x.requires_grad) if isinstance(x, torch.Tensor) else x for x in xs]


def check_like_eager(fn, *args, jfn=None):
    """Runs ``fn`` eagerly and jitted on copies of ``args``: outputs, gradients of the float inputs that require
    grad, and the inputs (updated in place or not) must be equal."""
    jfn = jfn or thunder.jit(fn)
    eager_args, jit_args = _leaves(args), _leaves(args)
    expected, actual = fn(*eager_args), jfn(*jit_args)
    torch.testing.assert_close(actual, expected)
    flat_expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    flat_actual = actual if isinstance(actual, (tuple, list)) else (actual,)
    assert [getattr(t, "requires_grad", None) for t in flat_actual] == \
        [getattr(t, "requires_grad", None) for t in flat_expected]
    for a, e in zip(jit_args, eager_args):
        if isinstance(a, torch.Tensor):
            torch.testing.assert_close(a, e)
    wants = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.requires_grad]
    if wants:
        flat_e = [t for t in (expected if isinstance(expected, (tuple, list)) else (expected,)) if t.requires_grad]
        flat_a = [t for t in (actual if isinstance(actual, (tuple, list)) else (actual,)) if t.requires_grad]
        ge = torch.autograd.grad(sum(t.sum() for t in flat_e), [eager_args[i] for i in wants], allow_unused=True)
        ga = torch.autograd.grad(sum(t.sum() for t in flat_a), [jit_args[i] for i in wants], allow_unused=True)
        for a, e in zip(ga, ge):
            if e is None:
                assert a is None or not a.any()
            else:
                torch.testing.assert_close(a, e)
    return jfn


# In-place updates around a split (fuzz seeds 206092, 208286): what a segment hands over must hold the value the
# program reads after the split, whatever the next segment writes in place; the probes that read values while the
# program is traced never write into the caller's tensors.
ACROSS_A_SPLIT = {
    # v.copy_(t0) makes v and t0 one value: the split hands both over (the second used to get the mask)
    "copy_ makes two live names one value": lambda t0: (
        t0.lerp_(t0, 0.5), (lambda v: (v.copy_(t0), t0.__setitem__(t0 > 0, 0)))(torch.softmax(t0, -1)), t0)[-1],
    # v1[0] is a view of t0 when the split hands it over; t0 is written after: the old values are read
    "a view of an input read after the input is written": lambda t0: (lambda v1: (
        v1.copy_(t0), t0.__setitem__(t0 > 0, 0), v1[0] * 1)[-1])(t0 * 2),
    "the same through a view taken before the copy": lambda t0: (lambda v1: (lambda v2: (
        v1.copy_(t0), t0.__setitem__(t0 > 0, 0), v2 * 1)[-1])(v1[0]))(t0 * 2),
    # the probe running the second piece wrote through t0[-1] into the caller's t0 at trace time
    "an update through a view between two splits": lambda t0: (lambda v0, v1: (
        t0.unique(), v1.mul_(2), t0.__setitem__(t0 > 0, 0), v0 * 1)[-1])(torch.sigmoid(t0), t0[-1]),
}


@pytest.mark.parametrize("name", list(ACROSS_A_SPLIT))
def test_in_place_updates_across_a_split_like_eager(name):
    fn = ACROSS_A_SPLIT[name]
    jfn = thunder.jit(fn)
    for _ in range(2):
        check_like_eager(fn, torch.randn(3, 4), jfn=jfn)


def test_bool_of_a_tensor_splits_and_both_branches_run_like_eager():
    def f(x, y):
        a = x * 2
        if (a > 0).any():
            return a + y
        return a - y

    x = torch.randn(4, requires_grad=True)
    jfn = check_like_eager(f, x, torch.randn(4))
    check_like_eager(f, -x.detach().abs().requires_grad_(), torch.randn(4), jfn=jfn)
    check_like_eager(f, x.detach().abs().requires_grad_(), torch.randn(4), jfn=jfn)
    assert thunder.cache_misses(jfn) == 1
    assert thunder.compile_stats(jfn).continuations == 1  # the other branch, traced once, then reused


@pytest.fixture
def split_at_each_read(monkeypatch):
    """The program split at each read (what a call runs where a value read inside a segment fails its check)."""
    monkeypatch.setattr(segments_module, "READ_VALUES_INSIDE", False)


def test_each_segment_is_an_ordinary_trace_in_last_traces(split_at_each_read):
    def f(x):
        y = x.sin()
        n = int(y.sum() > 0)
        return y * (n + 1)

    jfn = thunder.jit(f)
    jfn(torch.ones(3))
    names = [t.fn_name for t in thunder.last_traces(jfn)]
    assert "segment0" in names and "segment1" in names
    assert names.index("segment0") < names.index("segment1")
    final = thunder.last_traces(jfn)[-1]
    assert final.fn_name == "segment1"
    assert "Segment 1 of the program" in str(thunder.last_traces(jfn)[names.index("segment1")])


def test_a_segment_takes_only_what_it_reads(split_at_each_read):
    # `a` is made in segment 0 and used in segment 2: segment 1 neither takes nor returns it (the runtime keeps
    # values by name), and gradients still flow from segment 2 into segment 0 through it
    def f(x):
        a = x.sin()
        b = x.cos() if bool(x.sum() > 0) else x
        c = b * 2 if bool(b.sum() > 0) else b
        return a + c

    jfn = check_like_eager(f, torch.rand(4, requires_grad=True))
    segments = {}
    for t in thunder.last_traces(jfn):
        segments.setdefault(t.fn_name, t)  # each segment as cut, before its transforms
    read = {a.name for b in segments["segment1"].bound_symbols for a in b.flat_proxy_args}
    assert {p.name for p in segments["segment1"].args} <= read
    made_before = {p.name for b in segments["segment0"].bound_symbols for p in b.flat_proxy_outs}
    assert not made_before & {p.name for p in segments["segment1"].output}


@pytest.mark.parametrize("read", ["int", "float", "index", "item_compare", "bool"])
def test_each_read_kind_like_eager_with_gradients(read):
    def f(x, n):
        if read == "int":
            k = int(n)
        elif read == "float":
            k = float(n) * 0.5
        elif read == "index":
            k = [1.0, 2.0, 3.0, 4.0][n]
        elif read == "item_compare":
            k = 3 if n.item() > 1 else -1
        else:
            k = 2 if bool(n == 2) else 5
        return x * k

    x = torch.randn(3, requires_grad=True)
    jfn = check_like_eager(f, x, torch.tensor(2))
    check_like_eager(f, x, torch.tensor(1), jfn=jfn)
    check_like_eager(f, x, torch.tensor(2), jfn=jfn)
    assert thunder.compile_stats(jfn).continuations == 1


def test_range_of_a_tensor_value_and_tolist_loop_with_gradients():
    def f(x, n, picks):
        for _ in range(int(n)):
            x = x * 1.5
        out = torch.zeros_like(x)
        for i in picks.tolist():
            out[i] += x[i] * (i + 1)
        return out

    x = torch.randn(5, 2, requires_grad=True)
    jfn = check_like_eager(f, x, torch.tensor(2), torch.tensor([0, 3]))
    check_like_eager(f, x, torch.tensor(3), torch.tensor([4, 1]), jfn=jfn)
    check_like_eager(f, x, torch.tensor(2), torch.tensor([0, 3]), jfn=jfn)
    assert thunder.compile_stats(jfn).continuations == 1  # n=3 traced the rest of the program, tolist included


def test_number_arithmetic_on_item_stays_in_the_trace_until_control_flow_needs_it():
    def f(x):
        s = x.sum().item() * 2 + 1
        y = x * s
        if s > 0:
            return y
        return -y

    x = torch.randn(4, requires_grad=True)
    jfn = check_like_eager(f, x)
    check_like_eager(f, (-x.detach().abs() - 1).requires_grad_(), jfn=jfn)


def test_in_place_updates_of_inputs_across_segments():
    def f(x, y):
        x.add_(1)
        if x.sum() > 0:
            x.mul_(2)
        else:
            x.sub_(3)
        y[0] = x[0]
        return x + y

    jfn = check_like_eager(f, torch.randn(4), torch.randn(4))
    check_like_eager(f, torch.full((4,), -5.0), torch.randn(4), jfn=jfn)
    check_like_eager(f, torch.full((4,), 5.0), torch.randn(4), jfn=jfn)


def test_in_place_updates_of_intermediates_across_segments_with_gradients():
    def f(h, w, picks):
        out = torch.zeros_like(h) + 0 * h
        view = out[1:]  # a view taken before the split, updated after it
        for i in picks.tolist():
            out.index_add_(0, torch.tensor([i]), h[i:i + 1] * w[i])
        view.mul_(2)
        return out

    h, w = torch.randn(5, 3, requires_grad=True), torch.randn(5, 3, requires_grad=True)
    jfn = check_like_eager(f, h, w, torch.tensor([0, 2, 3]))
    check_like_eager(f, h, w, torch.tensor([0, 4, 1]), jfn=jfn)


def test_side_effects_across_segments():
    log = []

    class Box:
        pass

    box = Box()

    def f(x):
        box.first = x * 2
        if x.sum() > 0:
            log.append(1)
        box.second = x + 1
        return x

    jfn = thunder.jit(f)
    jfn(torch.ones(2))
    assert log == [1] and torch.equal(box.first, torch.full((2,), 2.0)) and torch.equal(box.second, torch.full((2,), 2.0))
    jfn(-torch.ones(2))
    assert log == [1] and torch.equal(box.first, torch.full((2,), -2.0))
    jfn(torch.ones(2))
    assert log == [1, 1]


def test_random_numbers_drawn_before_a_read_are_eagers():
    def f(x):
        noise = torch.rand(3)
        if (noise > 0.5).any():
            return x + noise
        return x - noise

    torch.manual_seed(0)
    expected = f(torch.ones(3))
    jfn = thunder.jit(f)
    torch.manual_seed(0)
    torch.testing.assert_close(jfn(torch.ones(3)), expected)
    torch.manual_seed(0)
    torch.testing.assert_close(jfn(torch.ones(3)), expected)


def test_continuations_are_bounded_with_a_warning():
    def f(x, n):
        return x * int(n)

    jfn = thunder.jit(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(20):
            torch.testing.assert_close(jfn(torch.ones(2), torch.tensor(k)), torch.full((2,), float(k)))
    messages = [str(w.message) for w in caught if issubclass(w.category, ContinuationLimitWarning)]
    assert messages and "int() of a tensor at" in messages[0] and "took more than 16 values" in messages[0]
    assert "return x * int(n)" in messages[0]  # the user's line
    # bounded: the 16 most recent values are kept, the oldest were dropped and are traced again
    traced = thunder.compile_stats(jfn).continuations
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.testing.assert_close(jfn(torch.ones(2), torch.tensor(19)), torch.full((2,), 19.0))
        assert thunder.compile_stats(jfn).continuations == traced
        torch.testing.assert_close(jfn(torch.ones(2), torch.tensor(1)), torch.full((2,), 1.0))
        assert thunder.compile_stats(jfn).continuations == traced + 1


def test_read_inside_a_checkpointed_region_is_refused_with_the_line():
    from torch.utils.checkpoint import checkpoint

    def body(x):
        return x * 2 if x.sum() > 0 else x

    def f(x):
        return checkpoint(body, x, use_reentrant=False)

    with pytest.raises(UnsupportedError,
                       match="bool\\(\\) of a tensor needs a value .* inside a region .* checkpoint.*x.sum\\(\\) > 0"):
        thunder.jit(f)(torch.ones(2, requires_grad=True))


def test_module_with_data_dependent_loop_trains_like_eager():
    class Router(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.experts = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(3))
            self.gate = torch.nn.Linear(4, 3)

        def forward(self, x):
            choice = self.gate(x).argmax(-1)
            out = torch.zeros_like(x)
            for e in range(3):
                if (choice == e).any():
                    out = out + self.experts[e](x) * (choice == e).unsqueeze(-1)
            return out

    torch.manual_seed(0)
    model = Router()
    jmodel = thunder.jit(model)
    for x in (torch.randn(6, 4), torch.randn(6, 4), torch.randn(6, 4) * 5):
        expected = model(x)
        (expected ** 2).sum().backward()
        eager_grads = [p.grad for p in model.parameters()]
        model.zero_grad(set_to_none=True)
        actual = jmodel(x)
        (actual ** 2).sum().backward()
        torch.testing.assert_close(actual, expected)
        torch.testing.assert_close([p.grad for p in model.parameters()], eager_grads)  # None where eager has None
        model.zero_grad(set_to_none=True)


def test_gradients_flow_through_a_value_accumulated_across_segments_inside_no_grad_routing():
    # transformers' eager experts: the routing under no_grad, then one index_add_ per expert hit into a tensor
    # made without grad; each segment's node hands the accumulated value on with its gradient
    def f(x, w):
        out = torch.zeros_like(x)
        with torch.no_grad():
            hit = (x > 0).nonzero()
        for i in hit:
            i = i[0]
            if i == 3:
                continue
            out.index_add_(0, i[None], x[i][None] * w)
        return out

    w = torch.randn(1, requires_grad=True)
    jfn = check_like_eager(f, torch.tensor([1.0, 2.0, -1.0, 2.0, -1.0], requires_grad=True), w)
    check_like_eager(f, torch.tensor([-1.0, 2.0, 1.0, 2.0, 1.0], requires_grad=True), w, jfn=jfn)


# ---------------------------------------------------------------------------------------------------------------
# Ops whose output size depends on data: the size is read at the call (a split), the op then has a fixed size
# ---------------------------------------------------------------------------------------------------------------


def _setitem_scalar(x, m):
    y = x * 1
    y[m] = 0.5
    return y


def _setitem_rows(x, r, v):
    y = x * 1
    y[r] = v * 2
    return y


def _getitem_rows_then_index_add(x, r):
    # the selected rows, computed on, and added back: the gradient of the selection is an index_add
    rows = x[r] * 3
    return torch.zeros_like(x).index_add(0, r.nonzero()[:, 0], rows.sin())


_MASK = torch.tensor([[True, False, True, True], [False, False, False, False], [True, True, False, True],
                      [False, True, False, False], [True, False, False, True]])
_ROWS = torch.tensor([True, False, True, True, False])
_DATA_DEPENDENT_OPS = {
    "nonzero": (lambda m: torch.nonzero(m), (_MASK,)),
    "nonzero_as_tuple": (lambda m: torch.nonzero(m, as_tuple=True), (_MASK,)),
    "nonzero_method_0d": (lambda t: t.nonzero(), (torch.tensor(3),)),
    "argwhere": (lambda m: torch.argwhere(m), (_MASK,)),
    "where_one_argument": (lambda m: torch.where(m), (_MASK,)),
    "masked_select": (lambda x, m: torch.masked_select(x, m) * 2, ("x", _MASK)),
    "masked_select_broadcast": (lambda x, m: x.masked_select(m[0]), ("x", _MASK)),
    "mask_index": (lambda x, m: x[m] * 3, ("x", _MASK)),
    "mask_index_rows": (lambda x, r: x[r] * 3, ("x", _ROWS)),
    "mask_index_second_dim": (lambda x, r: x[:, r[:4]].sum(0), ("x", _ROWS)),
    "mask_setitem_scalar": (_setitem_scalar, ("x", _MASK)),
    "mask_setitem_rows": (_setitem_rows, ("x", _ROWS, "v")),
    "rows_then_index_add": (_getitem_rows_then_index_add, ("x", _ROWS)),
    "unique": (lambda i: torch.unique(i), (torch.tensor([3, 1, 3, 0, 1, 1]),)),
    "unique_inverse_counts": (lambda i: torch.unique(i, return_inverse=True, return_counts=True),
                              (torch.tensor([3, 1, 3, 0, 1, 1]),)),
    "unique_method": (lambda i: i.unique(return_counts=True), (torch.tensor([2.0, 1.0, 2.0]),)),
    "unique_consecutive": (lambda i: torch.unique_consecutive(i, return_counts=True, return_inverse=True),
                           (torch.tensor([1, 1, 2, 2, 3, 1, 1]),)),
    "bincount": (lambda i: torch.bincount(i), (torch.tensor([3, 1, 3, 0, 1, 1]),)),
    "bincount_weights_minlength": (lambda i, w: torch.bincount(i, w, minlength=7),
                                   (torch.tensor([3, 1, 3, 0, 1, 1]), torch.arange(6.0))),
    "repeat_interleave": (lambda x, r: torch.repeat_interleave(x, r, dim=0), ("x", torch.tensor([1, 0, 2, 3, 1]))),
    "repeat_interleave_one_count": (lambda x, r: x.repeat_interleave(r, 1), ("x", torch.tensor([2]))),
    "repeat_interleave_counts_only": (lambda r: torch.repeat_interleave(r), (torch.tensor([1, 0, 2]),)),
    "split_sizes_read_with_tolist": (lambda x, s: x.split(s.tolist(), dim=1), ("x", torch.tensor([1, 3]))),
}


@pytest.mark.parametrize("name", sorted(_DATA_DEPENDENT_OPS))
def test_data_dependent_size_op_like_eager_with_gradients(name):
    fn, args = _DATA_DEPENDENT_OPS[name]
    torch.manual_seed(0)
    made = {"x": torch.randn(5, 4, requires_grad=True), "v": torch.randn(3, 4, requires_grad=True)}
    args = [made[a] if isinstance(a, str) else a for a in args]
    jfn = check_like_eager(fn, *args)
    check_like_eager(fn, *args, jfn=jfn)  # the same sizes: the cached continuation
    assert thunder.compile_stats(jfn).continuations == 0


def test_a_new_size_reuses_the_continuation_unless_its_checks_differ():
    # the size read at x[m] stays symbolic after the split; the continuation holds for every size passing the
    # checks recorded on it (here: size > 0), each other size class traces its own: one row passes them, no row
    # does not
    def f(x, m):
        return x[m].sum(0) * 2

    x = torch.randn(5, 3, requires_grad=True)
    jfn = check_like_eager(f, x, _ROWS)
    check_like_eager(f, x, ~_ROWS, jfn=jfn)
    check_like_eager(f, x, torch.tensor([True, True, True, True, True]), jfn=jfn)
    assert thunder.compile_stats(jfn).continuations == 0 and thunder.cache_misses(jfn) == 1
    one = torch.tensor([False, False, True, False, False])
    check_like_eager(f, x, one, jfn=jfn)
    check_like_eager(f, x, torch.zeros(5, dtype=torch.bool), jfn=jfn)
    check_like_eager(f, x, one, jfn=jfn)
    check_like_eager(f, x, _ROWS, jfn=jfn)
    assert thunder.compile_stats(jfn).continuations == 1


def test_split_with_sizes_in_a_tensor_raises_eagers_error():
    with pytest.raises(TypeError, match="must be tuple of ints, not Tensor"):
        torch.randn(5).split(torch.tensor([2, 3]))
    with pytest.raises(TypeError, match="must be tuple of ints, not Tensor"):
        thunder.jit(lambda x, s: x.split(s))(torch.randn(5), torch.tensor([2, 3]))


def test_size_read_inside_a_decomposition_is_refused_with_the_line():
    from torch.utils.checkpoint import checkpoint

    def f(x):
        return checkpoint(lambda x: x[x > 0].sum(), x, use_reentrant=False)

    with pytest.raises(UnsupportedError, match="the output size of nonzero needs a value computed from tensor data "
                       "inside a region .* checkpoint.*x\\[x > 0\\]"):
        thunder.jit(f)(torch.randn(4, requires_grad=True))


def test_a_continuation_traced_later_checks_what_it_assumed_about_earlier_sizes():
    # the first path never looks at the size of x[m]; the one traced for flag <= 0 branches on it, so reaching
    # that continuation again with another size must not reuse it
    def f(x, m, flag):
        y = x[m]
        if flag.item() > 0:
            return y.sum()
        if y.shape[0] == 3:
            return y * 2
        return y * 3

    x = torch.randn(5, 2)
    three, two = _ROWS, torch.tensor([True, False, False, True, False])
    jfn = check_like_eager(f, x, three, torch.tensor(1))
    check_like_eager(f, x, three, torch.tensor(-1), jfn=jfn)
    check_like_eager(f, x, two, torch.tensor(-1), jfn=jfn)
    check_like_eager(f, x, two, torch.tensor(1), jfn=jfn)
    check_like_eager(f, x, three, torch.tensor(-1), jfn=jfn)
    assert thunder.compile_stats(jfn).continuations == 2


def test_a_size_nothing_compared_is_not_checked_on_a_cache_hit():
    # the continuation of a size read serves every size its guard accepts; a guard asking nothing is not called
    from thunder.frontend.size_guards import _guard, sizes_check
    from thunder.frontend.value_reads import Read

    free = Read("size", 5, "here", "the output size of nonzero")
    free.guard = _guard("i0", [], {})
    assert free.guard.checks == () and sizes_check([free]) is None

    def positive(size):
        return size > 1

    positive.checks = ("(size) > 1",)
    compared, exact = Read("size", 5, "here", "a size"), Read("size", 7, "there", "another size")
    compared.guard = positive
    check = sizes_check([free, compared, exact])
    assert check([0, 2, 7]) and not check([9, 1, 7]) and not check([9, 2, 8])


@pytest.mark.parametrize("a, b", [
    (torch.ones(3), torch.ones(3)), (torch.ones(3), torch.zeros(3)), (torch.tensor([1.0, 2.0]), torch.tensor([1, 2])),
    (torch.ones(2, 1), torch.ones(2))],
    ids=["equal", "different", "promoted", "no broadcasting"])
def test_torch_equal_reads_its_answer_from_the_data(a, b):
    def f(a, b):
        if torch.equal(a, b):
            return a * 2
        return a.equal(b), a - 1

    jfn = thunder.jit(f)
    check_like_eager(f, a, b, jfn=jfn)
    check_like_eager(f, a, b * 0 + 7, jfn=jfn)  # the other answer: a new continuation


def test_torch_equal_nan_is_unequal_as_in_eager():
    nan = torch.tensor([float("nan"), 1.0])
    assert thunder.jit(lambda a, b: torch.equal(a, b))(nan, nan.clone()) is torch.equal(nan, nan.clone()) is False


def test_a_size_computed_inside_a_decomposition_crosses_a_split_under_symbolic_values():
    # fuzz seed 59: cat's size 2 * s0 is defined inside cat's decomposition; the segment must not take it as input
    def f(t0):
        v1 = torch.cat([t0, t0], 0)
        v5 = torch.zeros(v1.shape[0], 3)
        v6 = t0.index_select(0, torch.tensor([1, 0, 1]))
        v6[v6 > 0] = 0
        return v5.sum(0) + v1.sum(), v6

    jfn = thunder.jit(f, cache="symbolic values")
    for n in (2, 3, 5):
        check_like_eager(f, torch.randn(n), jfn=jfn)


def test_cleaning_the_trace_for_a_read_leaves_the_sizes_of_its_tensors_alone():
    # fuzz seed 241951: the read of nonzero's size cleans the trace so far (CSE), which merged flatten's size s0 * s1
    # into an equal one; it must not rename the dim of the program's own tensor, whose segment does not define it
    def f(t0, f0):
        v0 = t0.reshape(t0.shape[1], t0.shape[0], *t0.shape[2:])
        v0 |= v0
        v2 = t0.narrow(-2, 0, 1)
        v4 = v2.flatten(0, 1)
        v5 = torch.full(v2.shape, f0)
        v7 = v5[v5 > 0]
        t0.reshape(-1)
        return v4, v7

    jfn = thunder.jit(f, cache="symbolic values")
    for shape, f0 in (((2, 2, 2, 2), -0.05), ((3, 2, 2, 4), 0.5)):
        check_like_eager(f, torch.rand(shape) > 0.5, f0, jfn=jfn)


def _cat_twice_then_read(t):
    a, b = torch.cat((t, t)), torch.cat([t, t])  # two equal sizes: the first trace merges them, a second one not
    n = int(b.sum() > 0)
    return b.view(b.shape) + n, torch.einsum("...i,...i->...", b[None], b[None]), a


def _cat_twice_then_tolist(t):
    torch.cat((t, t))
    b = torch.cat([t, t])
    b.tolist()
    return b.view(b.shape[0] // 2, 2) * 2


@pytest.mark.parametrize("fn", [_cat_twice_then_read, _cat_twice_then_tolist])
def test_a_continuation_reads_a_size_named_anew_from_the_tensor_handed_over(fn):
    # fuzz seeds 201424, 203523: a continuation needed a size the segments before handed over under another name
    jfn = thunder.jit(fn, cache="symbolic values")
    for t in (torch.ones(2), -torch.ones(2), torch.ones(3), -torch.ones(3), torch.ones(2), torch.randn(3)):
        check_like_eager(fn, t, jfn=jfn)


def test_a_size_computed_from_a_size_made_before_the_split_crosses_it_under_symbolic_values():
    # fuzz seed 264041: after the split at the mask, the reshape's size s0 * i2 reads i2, the width of a view made in
    # the segment before; the segment must take i2 as input (it raised UnboundLocalError and ran eagerly)
    def f(t):
        v0 = torch.full(t.shape, 0.5)
        v1 = v0[..., ::2]
        v1.zero_()
        v0[v0 > 0] = 0
        v4 = v1.reshape(v1.shape[0], -1)
        v5 = v4[1:]
        v5.clamp_(max=0.25)
        return v4 + t[..., ::2], v5

    jfn = thunder.jit(f, cache="symbolic values")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for shape in ((3, 4), (3, 4), (2, 3), (4, 5)):
            check_like_eager(f, torch.randn(shape), jfn=jfn)


def test_a_layout_question_about_a_view_sized_by_a_read_keeps_its_check_out_of_the_prologue():
    # fuzz seed 304000: the update of a narrow view of unique's result makes functionalization ask the view's layout,
    # which constrains unique's size; the prologue cannot compute that size (it read prims.item: "no executor")
    def f(t0, t1):
        v0 = t0.unique()
        v1 = v0 / t1
        v2 = v0.narrow(0, 0, 1)
        v2.mul_(2)
        return v2 == v1, v0 * t1

    jfn = thunder.jit(f)
    for t0 in (torch.randn(2, 2), torch.ones(2, 2), torch.randn(2, 2), torch.tensor([[1.0, 2.0], [2.0, 1.0]])):
        check_like_eager(f, t0, torch.tensor(0.5, requires_grad=True), jfn=jfn)


def test_unique_values_require_grad_like_eager_and_an_opaque_op_of_them_too():
    # fuzz seed 307088: unique's values require grad in eager (its derivative is not implemented); an opaque op
    # after the split (einsum) read requires_grad=False from unique's proxy
    def f(t0):
        v3 = t0.unique()
        return torch.einsum("...i,...i->...", v3, v3)

    messages = []
    for fn in (f, thunder.jit(f)):
        out = fn(torch.randn(3, requires_grad=True))
        assert out.requires_grad
        with pytest.raises(NotImplementedError, match="_unique2") as info:
            out.backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _sum_over_a_dim_read_from_data(t0):
    v1 = t0.amax(1)
    v3 = t0.sum().item() * 2
    return v1.sum(v3 % v1.dim()), torch.arange(v3 % 5 + 1)


def _creations_sized_by_a_count(x):
    n = int((x > 0).sum())
    return torch.arange(n), x.new_zeros(n), torch.full((n, 2), 1.5)


@pytest.mark.parametrize("fn", [_sum_over_a_dim_read_from_data, _creations_sized_by_a_count])
def test_an_op_whose_decomposition_needs_a_value_from_data_reads_it_before_the_op(fn):
    # fuzz seed 306175: sum's dim computed from .item() was refused ("inside a region thunder traces as one
    # operation"); called from the program itself, the program is split before the op and the number read there
    jfn = thunder.jit(fn)
    for x in (torch.arange(9).reshape(3, 3) - 3, torch.arange(9).reshape(3, 3), torch.arange(9).reshape(3, 3) - 3):
        check_like_eager(fn, x, jfn=jfn)


def test_a_continuation_reads_an_input_updated_through_a_view_before_the_split():
    # fuzz seed 328429: under symbolic values the continuation traced for a new nonzero count named the updated input
    # anew (the value the store wrote into it), which the segments before hand over as the input itself
    def f(t1):
        v0 = t1[..., ::2]
        v0.mul_(2)
        v1 = torch.nonzero(t1)
        return v1, torch.stack([r + i for i, r in enumerate(v1)])

    for cache in ("constant values", "symbolic values"):
        jfn = thunder.jit(f, cache=cache)
        for x in (torch.randn(3), torch.tensor([1.0, 0.0, 2.0]), torch.randn(5), torch.tensor([0.0, 1.0, 0.0, 0.0])):
            check_like_eager(f, x, jfn=jfn)


# fuzz seed 367026: the mask of ``t0[t0 > 0] = 0`` is held only by the torch-language function reading its count
# (no frame of the program reaches it), and CSE named it as an equal value computed before; the probe of a
# continuation traced for another count needed it under its own name. Each op here reads a value computed twice.
_READ_WHAT_WAS_COMPUTED_BEFORE = {
    "mask_setitem": lambda t: (t.where(t > 0, t), t.__setitem__(t > 0, 0), t * 1)[-1],
    "mask_getitem": lambda t: (t.where(t > 0, -t), t[t > 0] * 2),
    "masked_select": lambda t: ((t > 0).float(), torch.masked_select(t, t > 0)),
    "nonzero": lambda t: ((t > 0).sum(), torch.nonzero(t > 0)),
    "unique": lambda t: ((t > 0).long() + 1, torch.unique((t > 0).long() + 1)),
    "repeat_interleave": lambda t: (t.clamp(min=0).long(), t.repeat_interleave(t.clamp(min=0).long())),
}


@pytest.mark.parametrize("name", sorted(_READ_WHAT_WAS_COMPUTED_BEFORE))
@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_a_continuation_reads_a_value_only_the_op_reading_data_holds(name, cache):
    fn = _READ_WHAT_WAS_COMPUTED_BEFORE[name]

    def f(t):
        out = fn(t)
        if out[-1].sum() > 0:  # a read after the op's: the probe running up to it needs what the op read
            return out, 1
        return out, 0

    jfn = thunder.jit(f, cache=cache)
    for x in ([1, -2, 3], [-1, -2, -3], [2, 2, 2], [-1, 1, -1]):
        check_like_eager(f, torch.tensor(x), jfn=jfn)


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_masked_select_broadcasts_symbolic_sizes_with_eagers_error(cache):
    # torch.broadcast_shapes cannot compare thunder's symbolic sizes; eager names the mask "tensor a"
    jfn = thunder.jit(torch.masked_select, cache=cache)
    for a, m in ((torch.randn(2, 3), torch.tensor([True, False, True])), (torch.randn(4, 5), torch.ones(4, 1) > 0)):
        check_like_eager(torch.masked_select, a, m, jfn=jfn)
    with pytest.raises(RuntimeError, match=r"tensor a \(4\) must match the size of tensor b \(3\)"):
        jfn(torch.randn(3), torch.ones(4) > 0)
    with pytest.raises(RuntimeError, match=r"tensor a \(4\) must match the size of tensor b \(3\)"):
        torch.masked_select(torch.randn(3), torch.ones(4) > 0)


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_a_continuation_taking_an_input_updated_through_a_view_runs_again_on_a_cache_hit(cache):
    # fuzz seed 390600: the continuation named the stored value anew, which only the call that traced it held
    def f(t1):
        t1[0].mul_(2)
        return torch.log_softmax(t1[t1 > 0], dim=0)

    jfn = thunder.jit(f, cache=cache)
    for x in ([1.0, -2.0, 3.0], [-1.0, 2.0, -3.0], [-2.0, 1.0, -1.0], [-1.0, -2.0, -3.0], [-1.0, -1.0, -1.0]):
        check_like_eager(f, torch.tensor(x), jfn=jfn)


# fuzz seed 433913: CSE merged a value into an equal one computed before and updated in place afterwards, whose name
# before functionalization is then the merged value's name in the segments; a continuation traced for a new value
# read took the updated value for the merged one. Each program reads a value computed twice, one of them updated.
_MERGED_WITH_AN_UPDATED_VALUE = {
    "constant_shapes": lambda t: (torch.tensor(t.shape), lambda a: a.__setitem__(0, 7), torch.tensor(t.shape)),
    "products": lambda t: (t * 2, lambda a: a.add_(1), t * 2),
    "zeros": lambda t: (torch.zeros(3), lambda a: a[::2].mul_(2).add_(1), torch.zeros(3)),
    "arange_through_a_view": lambda t: (torch.arange(4.0), lambda a: a.view(2, 2)[0].fill_(5), torch.arange(4.0)),
}


@pytest.mark.parametrize("name", sorted(_MERGED_WITH_AN_UPDATED_VALUE))
@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_a_continuation_tells_a_merged_value_from_the_updated_one_it_equals(name, cache):
    make = _MERGED_WITH_AN_UPDATED_VALUE[name]

    def f(t):
        first, update, _ = make(t)
        update(first)
        second = make(t)[2]
        n = int((t > 0).sum())  # a new count traces a new continuation after the update
        return first.float().sum() * n, second.float() + n, t[:n] * 2

    jfn = thunder.jit(f, cache=cache)
    for x in ([1.0, -2.0, 3.0, 4.0], [-1.0, -2.0, -3.0, 1.0], [2.0, 2.0, 2.0, 2.0], [1.0, -2.0, 3.0, 4.0]):
        check_like_eager(f, torch.tensor(x, requires_grad=True), jfn=jfn)


def _sized_by_an_item(x, counts):
    n = counts.max().item()  # an integer read from tensor data that only sizes tensors
    padded = x.new_zeros(n, x.shape[1])
    return torch.cat([padded, x]) * 2, torch.arange(n) + 1


@pytest.mark.parametrize("cache, continuations", [("symbolic values", 0), ("constant values", 3)])
def test_an_integer_that_only_sizes_tensors_stays_symbolic_under_symbolic_values(cache, continuations):
    # under "symbolic values" the size is read (in the segment, checked by its guard) and stays i0 in the trace:
    # one trace serves each count; under "constant values" each count is a continuation of its own
    jfn = thunder.jit(_sized_by_an_item, cache=cache)
    x = torch.randn(3, 4, requires_grad=True)
    for c in (2, 5, 3, 7, 5):
        check_like_eager(_sized_by_an_item, x, torch.tensor([c, 1]), jfn=jfn)
    assert thunder.compile_stats(jfn).continuations == continuations
    if cache == "symbolic values":
        assert "i64[i0]" in str(thunder.last_traces(jfn)[-1])  # arange(n): sized by the symbolic read
