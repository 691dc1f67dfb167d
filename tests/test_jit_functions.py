"""thunder.jit on functions, against eager PyTorch."""

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError


def f(a, b):
    return (a * b + a).sin().sum(-1)


def test_matches_eager_and_prints_runnable_trace():
    a, b = torch.randn(8, 8), torch.randn(8, 8)
    jf = thunder.jit(f)
    torch.testing.assert_close(jf(a, b), f(a, b))
    final = thunder.last_traces(jf)[-1]
    source = str(final)
    assert "torch.sin(" in source and "# a: \"cpu f32[8, 8]\"" in source
    assert "test_jit_functions.py" in source and "return (a * b + a).sin().sum(-1)" in source
    namespace = {}
    exec(compile(source, "<printed trace>", "exec"), namespace)  # the printed trace is a program
    torch.testing.assert_close(namespace["computation"](a, b), f(a, b))


def test_every_transform_leaves_a_trace_with_its_time():
    jf = thunder.jit(f)
    jf(torch.randn(2, 2), torch.randn(2, 2))
    traces = thunder.last_traces(jf)
    assert len(traces) >= 4
    for t in traces[1:]:
        assert str(t).startswith("# Constructed by") and "ms)" in str(t).splitlines()[0]
    assert "del " in str(traces[-1])  # intermediates are freed after their last use


def test_cache_hits_and_misses():
    jf = thunder.jit(f)
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    jf(a, b)
    jf(torch.randn(4, 4), torch.randn(4, 4))
    assert (thunder.cache_misses(jf), thunder.cache_hits(jf)) == (1, 1)
    c, d = torch.randn(3, 5), torch.randn(3, 5)
    out = jf(c, d)  # new shape: new entry
    torch.testing.assert_close(out, f(c, d))
    jf(a.double(), b.double())  # new dtype: new entry
    assert thunder.cache_misses(jf) == 3
    jf(a, b)
    assert thunder.cache_hits(jf) == 2
    stats = thunder.compile_stats(jf)
    assert stats.calls == 5 and stats.last_compile_seconds > 0


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_tensor_checks_accept_what_the_python_checks_accept(cache):
    # the prologue asks PyTorch's C++ tensor guard first and its own Python check where the guard says no: the
    # guard is stricter (exact class, dispatch keys), so a Parameter, an inference tensor or a non-contiguous view
    # of the traced metadata is still a hit, and any other dtype, device, shape or requires_grad still a miss
    jf = thunder.jit(f, cache=cache)
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    jf(a, b)
    prologue = jf.entries[0].prologue
    guards = [v for k, v in prologue.__globals__.items() if k.endswith("_guard")]
    assert len(guards) == 2 and all(g.check(a) for g in guards)  # the fast path accepts what was traced
    with torch.inference_mode():
        inference = torch.randn(4, 4)
    for x, y in [(torch.nn.Parameter(torch.randn(4, 4), requires_grad=False), torch.randn(4, 4)),
                 (inference, torch.randn(4, 4)), (torch.randn(4, 4).t(), torch.randn(8, 4)[::2])]:
        torch.testing.assert_close(jf(x, y), f(x, y))
    assert thunder.cache_misses(jf) == 1
    misses = 1
    for x, y in [(a.double(), b.double()), (a.to("meta"), b.to("meta")), (torch.randn(4, 4, 1), torch.randn(4, 4, 1)),
                 (a.clone().requires_grad_(), b)]:
        out = jf(x, y)
        misses += 1
        assert thunder.cache_misses(jf) == misses
        if x.device.type != "meta":
            torch.testing.assert_close(out, f(x, y))


def test_no_caching_traces_every_call():
    jf = thunder.jit(f, cache="no caching")
    a, b = torch.randn(2, 2), torch.randn(2, 2)
    jf(a, b)
    jf(a, b)
    assert thunder.cache_misses(jf) == 2 and thunder.cache_hits(jf) == 0


def test_same_input_skips_checks():
    jf = thunder.jit(f, cache=thunder.CACHE_OPTIONS.SAME_INPUT)
    a, b = torch.randn(2, 2), torch.randn(2, 2)
    torch.testing.assert_close(jf(a, b), f(a, b))
    a2, b2 = torch.randn(2, 2), torch.randn(2, 2)
    torch.testing.assert_close(jf(a2, b2), f(a2, b2))
    assert thunder.cache_hits(jf) == 1
    assert "check_tensor" not in str(thunder.last_prologue_traces(jf)[-1])


def test_unknown_cache_option():
    with pytest.raises(ValueError, match="unknown cache option"):
        thunder.jit(f, cache="sometimes")


def test_int_tensors():
    jf = thunder.jit(lambda a, b: a + b)
    a, b = torch.tensor([[1, 2], [3, 4]]), torch.tensor([[5, 6], [7, 8]])
    out = jf(a, b)
    assert out.dtype == torch.int64
    torch.testing.assert_close(out, a + b)


def test_number_arguments_are_baked_in_and_checked():
    def g(x, n, scale=2.0):
        return x * n + scale

    jg = thunder.jit(g)
    x = torch.randn(3)
    torch.testing.assert_close(jg(x, 3), g(x, 3))
    torch.testing.assert_close(jg(x, 4), g(x, 4))  # a different number: a different entry, never a stale one
    torch.testing.assert_close(jg(x, 4, scale=0.5), g(x, 4, scale=0.5))
    assert thunder.cache_misses(jg) == 3
    torch.testing.assert_close(jg(x, 3), g(x, 3))
    assert thunder.cache_hits(jg) == 1


def test_python_control_flow_on_shapes_is_guarded():
    def g(x):
        if x.shape[0] > 4:
            return x.cos()
        return x.sin()

    jg = thunder.jit(g)
    big, small = torch.randn(5, 2), torch.randn(3, 2)
    torch.testing.assert_close(jg(big), g(big))
    torch.testing.assert_close(jg(small), g(small))
    torch.testing.assert_close(jg(big), g(big))


SCALE = 3.0
WEIGHT = torch.ones(3)


def uses_globals(x):
    return x * SCALE + WEIGHT


def test_globals_are_inputs_checked_by_the_prologue():
    global SCALE, WEIGHT
    jg = thunder.jit(uses_globals)
    x = torch.randn(3)
    torch.testing.assert_close(jg(x), uses_globals(x))
    old = SCALE, WEIGHT
    try:
        SCALE = 5.0
        torch.testing.assert_close(jg(x), uses_globals(x))  # changed number: retrace
        WEIGHT = torch.full((3,), 7.0)
        torch.testing.assert_close(jg(x), uses_globals(x))  # new tensor, same metadata: reached, not stale
    finally:
        SCALE, WEIGHT = old


def test_closures_are_inputs():
    def make(bias):
        def inner(x):
            return x + bias

        return inner

    t = torch.ones(2)
    inner = make(t)
    ji = thunder.jit(inner)
    torch.testing.assert_close(ji(torch.zeros(2)), torch.ones(2))
    t.mul_(5)  # mutated in place: the cell holds the same tensor, the computation reads it anew
    torch.testing.assert_close(ji(torch.zeros(2)), torch.full((2,), 5.0))


def test_unsupported_operation_names_op_and_line():
    def g(x):
        return torch.histogram(x, bins=3)

    with pytest.raises(UnsupportedError) as info:
        thunder.jit(g)(torch.ones(3))
    msg = str(info.value)
    assert "histogram" in msg and "test_jit_functions.py" in msg and "return torch.histogram(x, bins=3)" in msg


def test_meta_errors_match_eager_exception_types():
    def g(a, b):
        return a + b

    a, b = torch.ones(2, 3), torch.ones(4, 3)
    with pytest.raises(RuntimeError) as eager:
        g(a, b)
    with pytest.raises(type(eager.value), match="must match the size"):
        thunder.jit(g)(a, b)


def test_cse_merges_repeated_work():
    def g(x):
        return x.exp() + x.exp()

    jg = thunder.jit(g)
    x = torch.randn(4)
    torch.testing.assert_close(jg(x), g(x))
    assert str(thunder.last_traces(jg)[-1]).count("torch.exp(") == 1


def test_returns_structures_and_non_tensors():
    def g(x):
        return {"y": x + 1, "n": 3, "pair": (x, x * 2)}

    x = torch.randn(2)
    out = thunder.jit(g)(x)
    assert out["n"] == 3 and out["pair"][0] is x
    torch.testing.assert_close(out["y"], x + 1)
    torch.testing.assert_close(out["pair"][1], x * 2)


def test_prologue_trace_is_python():
    jf = thunder.jit(f)
    jf(torch.randn(2, 2), torch.randn(2, 2))
    src = str(thunder.last_prologue_traces(jf)[-1])
    assert "def prologue(*args, **kwargs):" in src and "return None" in src
    compile(src, "<prologue>", "exec")


def test_containers_of_tensors_as_arguments():
    def g(ts, d):
        return torch.stack(ts).sum(0) + d["w"]

    jg = thunder.jit(g)
    x = torch.randn(3)
    torch.testing.assert_close(jg([x, x * 2], {"w": x}), g([x, x * 2], {"w": x}))
    torch.testing.assert_close(jg([x, x, x], {"w": x}), g([x, x, x], {"w": x}))  # new length: new entry
    assert thunder.cache_misses(jg) == 2
    torch.testing.assert_close(jg([x * 3, x], {"w": x * 0}), g([x * 3, x], {"w": x * 0}))
    assert thunder.cache_hits(jg) == 1


def test_mutating_an_outside_list_is_refused_not_silently_lost():
    def g(ts):
        ts.append(ts[0] * 2)
        return ts[0]

    with pytest.raises(UnsupportedError, match="mutated the list args\\[0\\]"):
        thunder.jit(g)([torch.ones(2)])


def test_data_dependent_control_flow_inside_cond_is_a_clear_error():
    # at the top level the program is split at the read (tests/test_values_from_tensor_data.py); a torch.cond
    # branch is a sub-program that cannot be split
    def g(x):
        def yes(x):
            return x if x.sum() > 0 else -x

        return torch.cond(x.mean() > 0, yes, lambda x: x * 2, (x,))

    with pytest.raises(UnsupportedError, match="bool\\(\\) of a tensor needs its value.*x.sum\\(\\) > 0.*torch.cond branch"):
        thunder.jit(g)(torch.ones(2))


def test_same_tensor_by_two_paths_is_two_checked_inputs():
    def g(a, b):
        return a * 2 + b

    jg = thunder.jit(g)
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(jg(x, x), g(x, x))
    torch.testing.assert_close(jg(x, y), g(x, y))  # b is no longer a: it must not be read as a


def test_manual_seed_and_rng_state_inside_are_replayed():
    def f(x):
        torch.manual_seed(123)
        return x + torch.rand(3)

    jf = thunder.jit(f)
    x = torch.zeros(3)
    first, second = jf(x), jf(x)
    torch.testing.assert_close(first, f(x))
    torch.testing.assert_close(second, f(x))  # reseeded on the cached call too

    def g(x):
        state = torch.get_rng_state()
        a = torch.rand(3)
        torch.set_rng_state(state)
        b = torch.rand(3)  # the same numbers again
        return x + a, b

    jg = thunder.jit(g)
    for _ in range(2):
        torch.manual_seed(7)
        a, b = jg(x)
        jit_state = torch.get_rng_state()
        torch.manual_seed(7)
        ea, eb = g(x)
        torch.testing.assert_close(a, ea)
        torch.testing.assert_close(b, eb)
        assert torch.equal(jit_state, torch.get_rng_state())  # the generator ends where eager leaves it


def test_device_of_a_proxy_meets_torch_device_like_eager():
    # a proxy's device is a thunder Device: torch.device() of it (transformers' caches build one) and comparisons
    # with a torch.device must take eager's branch
    def f(x):
        y = x.to(torch.device(x.device)) * (2 if x.device == torch.device("cpu") else 3)
        return y * (5 if torch.device("cpu") != x.device else 7)

    x = torch.randn(3)
    torch.testing.assert_close(thunder.jit(f)(x), f(x))


def test_an_index_tuple_argument_is_checked_by_value():
    # (slice(None), [0, 3]) and ([0, 3], slice(None)) have the same length: a check of the length alone reused the
    # first program (indexing another dim) for the second key
    jf = thunder.jit(lambda a, idx: a[idx])
    a = torch.arange(125.0).reshape(5, 5, 5)
    keys = [(slice(None), slice(None), [0, 3]), (slice(None), [0, 3], slice(None)), ([0, 3], slice(None), ...),
            (slice(1, 4), [0, 3], slice(None)), (slice(None), slice(None), [0, 3])]
    for key in keys:
        torch.testing.assert_close(jf(a, key), a[key])
    assert thunder.cache_misses(jf) == 4 and thunder.cache_hits(jf) == 1


def test_compiler_queries_answer_as_in_eager_and_compiler_hints_do_nothing():
    # thunder runs the program as eager would: torch.compiler.is_compiling() is False (libraries pick eager's
    # kernels, transformers its is_causal attention), and torch.compile's hints about an input (transformers'
    # static cache marks its tensors) leave the program's result alone
    def fn(x):
        torch._dynamo.mark_static_address(x)
        torch._dynamo.maybe_mark_dynamic(x, 0)
        if torch.compiler.is_compiling() or torch.compiler.is_dynamo_compiling():
            return x * 3
        return x * 2

    x = torch.randn(4)
    torch.testing.assert_close(thunder.jit(fn)(x), fn(x))
