"""cache="symbolic values": numbers and tensor dimensions are inputs; what the program relied on is a
constraint the prologue re-checks; one compiled program serves many values."""

import signal

import pytest
import torch

import thunder
from nanogpt import GPT, GPTConfig
from thunder.testing.gradients import assert_output_and_grad_like_eager

SYMBOLIC = thunder.CACHE_OPTIONS.SYMBOLIC_VALUES


def test_seed_flag_example():
    # seed 000: control flow on a number records a constraint instead of baking the branch in silently
    def foo(flag):
        if flag > 5:
            return torch.ones(1)
        return torch.zeros(1)

    jfoo = thunder.jit(foo, cache=SYMBOLIC)
    assert jfoo(6).tolist() == [1.0]
    assert jfoo(0).tolist() == [0.0]
    assert jfoo(7).tolist() == [1.0] and jfoo(-3).tolist() == [0.0]
    assert thunder.cache_misses(jfoo) == 2
    assert "flag > 5" in str(thunder.last_prologue_traces(jfoo)[-1])


def test_returned_number_is_computed_not_baked():
    def step(x, cumulative_length, seq_len):
        return x * 2, cumulative_length + seq_len

    jstep = thunder.jit(step, cache="symbolic values")
    for i in range(5):
        out, total = jstep(torch.ones(2), 10 * i, i)
        assert total == 11 * i
    assert thunder.cache_misses(jstep) == 1
    final = str(thunder.last_traces(jstep)[-1])
    assert "cumulative_length + seq_len" in final


def test_seed_split_example_defines_every_size():
    # seed 000: the sizes of split's outputs are computed in the trace, never popping up from nowhere
    def foo(a, dim0, dim1):
        dim2 = a.size(2) - dim0 - dim1
        return torch.split(a, (dim0, dim1, dim2), dim=2)

    jfoo = thunder.jit(foo, cache=SYMBOLIC)
    for d0, d1, last in [(2, 8, 32), (3, 5, 24), (4, 4, 40)]:
        a = torch.randn(8, 16, last)
        for got, want in zip(jfoo(a, d0, d1), foo(a, d0, d1)):
            torch.testing.assert_close(got, want)
    assert thunder.cache_misses(jfoo) == 1
    final = thunder.last_traces(jfoo)[-1]
    defined = {p.name for p in final.args}
    for bsym in final.bound_symbols:
        for o in bsym.flat_proxy_outs:
            defined.add(o.name)
            for d in getattr(o, "shape", ()):
                assert isinstance(d, int) or d.name in defined, f"{d.name} used before it is defined"
    assert 'f32[s0, s1, s2]' in str(final)


def test_symbolic_shapes_serve_many_lengths():
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=2)).eval()
    jm = thunder.jit(model, cache=SYMBOLIC)
    for t in range(8, 41):
        idx = torch.randint(0, 256, (2, t))
        torch.testing.assert_close(jm(idx), model(idx))
    assert thunder.cache_misses(jm) == 1


def test_constant_values_compiles_per_length():
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=1)).eval()
    jm = thunder.jit(model)
    for t in range(8, 12):
        jm(torch.randint(0, 256, (1, t)))
    assert thunder.cache_misses(jm) == 4


def test_training_over_varying_lengths():
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=1))
    reference = GPT(GPTConfig(n_layer=1))
    reference.load_state_dict(model.state_dict())
    jm = thunder.jit(model, cache=SYMBOLIC)
    for t in (8, 13, 21):
        idx = torch.randint(0, 256, (2, t))
        targets = torch.randint(0, 256, (2, t))
        _, loss = jm(idx, targets)
        _, ref_loss = reference(idx, targets)
        torch.testing.assert_close(loss, ref_loss)
        loss.backward()
        ref_loss.backward()
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
    assert thunder.cache_misses(jm) == 1


def test_module_parameters_keep_static_shapes():
    lin = torch.nn.Linear(4, 3)
    jl = thunder.jit(lin, cache=SYMBOLIC)
    jl(torch.randn(5, 4))
    source = str(thunder.last_traces(jl)[-1])
    assert 'weight: "cpu f32[3, 4]"' in source and 'x: "cpu f32[s0, s1]"' in source.replace("input", "x")


def test_shape_mismatch_still_errors_like_eager():
    def f(a, b):
        return a + b

    jf = thunder.jit(f, cache=SYMBOLIC)
    torch.testing.assert_close(jf(torch.ones(2, 3), torch.ones(2, 3)), torch.full((2, 3), 2.0))
    import pytest

    with pytest.raises(RuntimeError, match="must match"):
        jf(torch.ones(2, 3), torch.ones(4, 3))


def test_kv_cache_decode_steps():
    # a decode loop: prefill 5 tokens, then 31 single-token steps writing into a preallocated cache
    torch.manual_seed(0)
    E, H, MAX = 32, 4, 64
    emb = torch.nn.Embedding(100, E)
    qkv = torch.nn.Linear(E, 3 * E)

    def decode(input_ids, cumulative_length, k_cache, v_cache):
        seq_len = input_ids.shape[1]
        q, k, v = qkv(emb(input_ids)).split(E, dim=-1)
        q, k, v = (t.view(1, seq_len, H, E // H).transpose(1, 2) for t in (q, k, v))
        pos = torch.arange(cumulative_length, cumulative_length + seq_len)
        k_cache.index_copy_(2, pos, k)
        v_cache.index_copy_(2, pos, v)
        end = cumulative_length + seq_len
        return torch.nn.functional.scaled_dot_product_attention(q, k_cache[:, :, :end], v_cache[:, :, :end])

    jdecode = thunder.jit(decode, cache=SYMBOLIC)
    caches = [torch.zeros(1, H, MAX, E // H) for _ in range(2)]
    eager_caches = [c.clone() for c in caches]
    position = 0
    with torch.no_grad():
        for step in range(32):
            n = 5 if step == 0 else 1
            ids = torch.randint(0, 100, (1, n))
            torch.testing.assert_close(jdecode(ids, position, *caches), decode(ids, position, *eager_caches))
            for c, e in zip(caches, eager_caches):
                torch.testing.assert_close(c, e)
            position += n
    assert thunder.cache_misses(jdecode) <= 2


def test_number_checks_come_before_module_checks_and_last_entry_first():
    # a prefill entry must turn a decode call away at its first lines, not after every check of the module;
    # and the entry that served the last call is tried first
    lin = torch.nn.Linear(4, 4)

    def f(x):
        if x.shape[0] == 1:
            return lin(x) * 2
        return lin(x)

    jf = thunder.jit(f, cache=SYMBOLIC)
    torch.testing.assert_close(jf(torch.ones(3, 4)), f(torch.ones(3, 4)))
    source = str(thunder.last_prologue_traces(jf)[-1])
    body = source[source.index("def prologue"):]  # the header lists names bound when compiled
    assert body.index("if b") < body.index("lin_weight")
    torch.testing.assert_close(jf(torch.ones(1, 4)), f(torch.ones(1, 4)))
    decode_entry = thunder.compile_stats(jf).last_entry
    torch.testing.assert_close(jf(torch.ones(1, 4)), f(torch.ones(1, 4)))
    assert thunder.cache_misses(jf) == 2 and thunder.cache_hits(jf) == 1
    assert jf.entries[0] is decode_entry


def test_truthiness_of_a_size_is_a_constraint_on_zero_not_on_the_value():
    # transformers 4.x's DynamicCache asks `not self.key_cache[i].numel()`: one program for every non-empty size
    def f(x, n):
        if not x.numel():
            return x.sum()
        return x * 2 if n else x * 3

    jf = thunder.jit(f, cache=SYMBOLIC)
    for rows, n in ((2, 1), (3, 5), (7, -2), (4, 0), (9, 0)):
        torch.testing.assert_close(jf(torch.ones(rows, 3), n), f(torch.ones(rows, 3), n))
    torch.testing.assert_close(jf(torch.ones(0, 3), 1), f(torch.ones(0, 3), 1))
    assert thunder.cache_misses(jf) == 3  # n truthy, n zero, and the empty tensor


def test_text_of_containers_holding_numbers_is_eagers():
    # native str()/repr() of a container the program built shows its numbers as eager does (not proxy names),
    # and the number the text depends on is a constraint: another value retraces
    def f(x, n, d):
        return x * len(str([n])) + len(repr((n, 2))) + len(f"{[n]}") + len(str(tuple(d.items())))

    jf = thunder.jit(f, cache=SYMBOLIC)
    x = torch.ones(2)
    for n, d in ((1.5, {"a": 1.0}), (1.5, {"a": 1.0}), (10.25, {"a": 12.5}), (7, {"a": 3})):
        torch.testing.assert_close(jf(x, n, d), f(x, n, d))


# A number of the trace that an op checks for validity (a size >= 0, a step's sign, a probability) is compared as a
# number, so a symbolic one gets a constraint: a later call with an invalid value raises eager's error (fuzz seed
# 208325: torch.empty(round(G * 3)) with G turned negative returned a tensor).
VALIDITY_CHECKS = {  # results unused, as in the fuzz program: the kernel that would raise is not even run
    "empty": (lambda n: [torch.empty(n).fill_(1), None][1], [3, -4, 2]),
    "empty of a computed size": (lambda f: [torch.empty(round(f * 3)).fill_(1), None][1], [0.5, -1.5, 1.0]),
    "zeros of a computed size": (lambda n: [torch.zeros(n - 3, 2), None][1], [5, 1, 4]),
    "new_ones": (lambda n: [torch.ones(2).new_ones(n), None][1], [2, -1, 5]),
    "arange bounds": (lambda n: [torch.arange(n, 4), None][1], [0, 6, 2]),
    "arange step": (lambda n: [torch.arange(0, 5, n), None][1], [2, -1, 0, 3]),
    "arange float bound": (lambda f: torch.arange(0.0, f) * 1, [2.5, 3.7, -1.0, 1.0]),
    "eye": (lambda n: [torch.eye(n), None][1], [3, -2, 4]),
    "linspace": (lambda n: [torch.linspace(0, 1, n), None][1], [3, -1, 5]),
    "dropout probability": (lambda p: torch.nn.functional.dropout(torch.ones(3), p, training=False), [0.5, 1.5, 0.2]),
}


@pytest.mark.parametrize("name", list(VALIDITY_CHECKS))
def test_validity_checks_of_symbolic_numbers_hold_on_later_calls(name):
    f, values = VALIDITY_CHECKS[name]
    jf = thunder.jit(f, cache="symbolic values")
    for v in values:
        try:
            expected = f(v)
        except Exception as e:
            with pytest.raises(type(e)) as info:
                jf(v)
            assert str(info.value) == str(e)
            continue
        torch.testing.assert_close(jf(v), expected)


def test_sizes_a_grad_rule_traces_again_keep_the_names_later_ops_read():
    # fuzz seed 304528: chunk's forward, traced again by its grad rule, named its output's width anew; the strided
    # slice of that output computed its size from the traced name, defined nowhere (UnboundLocalError)
    import warnings

    from thunder.frontend.jit import CompiledProgramFailedWarning

    def f(t1):
        v1 = t1.chunk(2, 1)[-1]
        v2 = v1[:, ::2]
        torch.hstack([v1, v2])  # an opaque call with torch autograd, whose output is unused
        return t1 * 2

    jf = thunder.jit(f, cache="symbolic values")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", CompiledProgramFailedWarning)
        for shape in ((3, 2), (3, 2), (5, 5), (4, 7)):
            assert_output_and_grad_like_eager(jf, f, torch.randn(shape, requires_grad=True))


def test_checks_implied_by_a_size_checked_equal_to_an_int_are_not_repeated():
    # a decode step's length is checked == 1; every other check computed from it alone held when traced with 1
    def step(x, k, cache):
        if x.shape[1] == 1:  # the pin
            y = x.reshape(x.shape[0] * x.shape[1] * 7, -1)  # checks on products of the pinned sizes
            if cache.shape[0] == x.shape[1] + 1 and cache.shape[0] * 9 > 3:  # a pin by pinned sizes, implied check
                y = y + cache.sum()
            return y * 2 if x.shape[1] * 5 + 3 > 7 else y
        return x.sum() + k

    jstep = thunder.jit(step, cache=SYMBOLIC)
    cache = torch.ones(2)
    for batch in (2, 3):
        x = torch.randn(batch, 1, 14)
        torch.testing.assert_close(jstep(x, 1, cache), step(x, 1, cache))
    code = [line for line in str(thunder.last_prologue_traces(jstep)[-1]).splitlines() if "#" not in line]
    prologue = "\n".join(code)
    # the pins are checked; what they imply is not
    assert "== 1" in prologue and "* 5" not in prologue and "* 9" not in prologue
    torch.testing.assert_close(jstep(x, 1, torch.ones(3)), step(x, 1, torch.ones(3)))  # the second pin holds
    assert thunder.cache_misses(jstep) == 2
    # the pin still turns away other lengths, which compile their own program and are right
    x = torch.randn(2, 3, 14)
    torch.testing.assert_close(jstep(x, 1, cache), step(x, 1, cache))
    assert thunder.cache_misses(jstep) == 3
    x = torch.randn(4, 1, 14)
    torch.testing.assert_close(jstep(x, 2, cache), step(x, 2, cache))
    assert thunder.cache_misses(jstep) == 3


def test_checks_on_a_long_chain_of_reused_numbers_compile_in_linear_time():
    # each number of the chain reads the one before twice: walking what a check is computed from without a memo
    # visits 2**60 paths (it ran for hours), and so did writing its formula in the reason of a cache miss; an alarm
    # bounds the test where either comes back
    def f(x, m, n):
        if m == 1:  # a pin: the prologue asks which checks it implies
            x = x + 1
        for _ in range(60):
            n = n + n
        return x * 2 if n > 0 else x

    jf = thunder.jit(f, cache=SYMBOLIC)

    class TooSlow(BaseException):  # not an Exception: thunder's handlers of the program's errors let it through
        pass

    def too_slow(signum, frame):
        raise TooSlow("compiling a chain of 60 reused numbers took over a minute")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(60)
    try:
        torch.testing.assert_close(jf(torch.ones(2), 1, 1), f(torch.ones(2), 1, 1))
        torch.testing.assert_close(jf(torch.ones(2), 1, -1), f(torch.ones(2), 1, -1))  # a miss, explained
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    # the formula too long for a line is named instead
    assert "(a number the program computed) > 0): expected True, got False" in str(thunder.examine.cache_report(jf))


def test_a_size_of_a_merged_duplicate_is_read_as_the_survivors():
    # fuzz seed 341310: common-subexpression elimination merged the second cat([t0] * 3) into the first, dropping the
    # size its decomposition computed, which the cat of both still read (UnboundLocalError, eager fallback)
    import warnings

    from thunder.frontend.jit import CompiledProgramFailedWarning

    def f(t0, t1):
        v0 = torch.cat([t0] * 3, -1)
        v0.logical_not_()
        v5 = torch.cat([t0] * 3, -1)
        return torch.cat((v0, v5.to(v0.dtype))), torch.add(t1, v5, alpha=2)

    jf = thunder.jit(f, cache="symbolic values")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompiledProgramFailedWarning)
        for n in (3, 3, 5):
            t0, t1 = torch.rand(n) > 0.5, torch.tensor(0.5)
            torch.testing.assert_close(jf(t0, t1), f(t0, t1), rtol=0, atol=0)  # dtypes and the count of results too
