"""Random operations: with the same seed, jit and eager draw the same numbers and leave the generator in
the same state (unused draws included, none merged)."""

import pytest
import torch
import torch.nn.functional as F

import thunder

x = torch.randn(4, 5)
probs = torch.rand(3, 6) + 0.1

CASES = {
    "rand": (lambda a: torch.rand(3, 4) + a.sum(), (x,)),
    "rand_tuple_dtype": (lambda a: torch.rand((2, 3), dtype=torch.float64), (x,)),
    "randn": (lambda a: a + torch.randn(4, 5), (x,)),
    "randn_size_kw": (lambda a: torch.randn(size=(2, 2)) * a[0, 0], (x,)),
    "randint": (lambda a: torch.randint(0, 10, (3, 4)), (x,)),
    "randint_high_only": (lambda a: torch.randint(7, (5,)), (x,)),
    "randperm": (lambda a: torch.randperm(6), (x,)),
    "rand_like": (lambda a: torch.rand_like(a), (x,)),
    "randn_like_dtype": (lambda a: torch.randn_like(a, dtype=torch.float64), (x,)),
    "randint_like": (lambda a: torch.randint_like(a, 3, 9), (x,)),
    "bernoulli": (lambda p: torch.bernoulli(p / 2), (probs,)),
    "bernoulli_method": (lambda p: (p / 2).bernoulli(), (probs,)),
    "bernoulli_p": (lambda p: torch.bernoulli(p, 0.3), (probs,)),
    "multinomial": (lambda p: torch.multinomial(p, 4), (probs,)),
    "multinomial_replacement": (lambda p: p.multinomial(10, replacement=True), (probs,)),
    "normal_tensors": (lambda a: torch.normal(a, a.abs() + 1), (x,)),
    "normal_floats": (lambda a: torch.normal(2.0, 3.0, size=(3, 2)) + 1, (x,)),
    "normal_mean_tensor": (lambda a: torch.normal(a, 0.5), (x,)),
    "poisson": (lambda p: torch.poisson(p * 4), (probs,)),
    "dropout": (lambda a: F.dropout(a, 0.5), (x,)),
    "dropout_functional_training": (lambda a: F.dropout(a, p=0.2, training=True) * 2, (x,)),
    "torch_dropout": (lambda a: torch.dropout(a, 0.3, True), (x,)),
    "unused_and_repeated": (lambda a: (torch.rand(3), torch.rand(3))[1] + torch.rand(3), (x,)),
    "two_equal_calls": (lambda a: (torch.randn_like(a), torch.randn_like(a)), (x,)),
    "rrelu_opaque": (lambda a: F.rrelu(a, training=True), (x,)),
}


def _same(actual, expected):
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    else:
        for a, e in zip(actual, expected, strict=True):
            _same(a, e)


@pytest.mark.parametrize("name", list(CASES))
def test_random_matches_eager_and_generator_state(name):
    fn, args = CASES[name]
    torch.manual_seed(1234)
    expected = fn(*args)
    state_after = torch.get_rng_state()
    jfn = thunder.jit(fn)
    for _ in range(2):  # the first call traces, the second runs the cached program
        torch.manual_seed(1234)
        actual = jfn(*args)
        _same(actual, expected)
        assert torch.equal(torch.get_rng_state(), state_after), "the generator advanced differently from eager"


def test_successive_calls_draw_new_numbers():
    jfn = thunder.jit(lambda a: torch.rand_like(a))
    assert not torch.equal(jfn(x), jfn(x))


def test_dropout_module_train_and_eval():
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Dropout(0.4), torch.nn.Linear(8, 2))
    jmodel = thunder.jit(model)
    torch.manual_seed(7)
    expected = model(x)
    torch.manual_seed(7)
    _same(jmodel(x), expected)
    model.eval()
    _same(jmodel(x), model(x))
    trace = thunder.last_traces(jmodel)[-1].python()
    assert "dropout" not in trace


def test_random_ops_are_neither_merged_nor_dropped():
    def fn(a):
        torch.rand(2)  # unused
        return torch.randn_like(a), torch.randn_like(a)

    jfn = thunder.jit(fn)
    jfn(x)
    src = thunder.last_traces(jfn)[-1].python()
    assert src.count("= torch.rand(") == 1 and src.count("= torch.randn_like(") == 2, src


def test_generator_argument_draws_from_that_generator():
    # an outside generator is passed to the call the program runs (tests/test_explicit_generators.py covers more)
    g, eg = torch.Generator().manual_seed(0), torch.Generator().manual_seed(0)
    jf = thunder.jit(lambda a: torch.rand(3, generator=g) + a)
    a = torch.randn(3)
    for _ in range(2):
        assert torch.equal(jf(a), torch.rand(3, generator=eg) + a)
    assert torch.equal(g.get_state(), eg.get_state())


def test_random_validation_errors_match_eager():
    fn = lambda p: torch.multinomial(p, 10)  # noqa: E731  (more samples than categories, no replacement)
    with pytest.raises(RuntimeError):
        fn(probs)
    with pytest.raises(RuntimeError):
        thunder.jit(fn)(probs)
