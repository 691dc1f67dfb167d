"""Programs the differential fuzzer found with ``--executors inductor,torch`` (seeds 7100..7339), kept as
regression tests: each runs through the fuzzer's own runner against eager."""

import pytest
import torch

import thunder
from thunder.testing.fuzz.program import Call, Program, TensorInput
from thunder.testing.fuzz.runner import AGREEMENT, run_program


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_intermediates_round_like_eager(inductor_ex, dtype):
    # seeds 7254, 7279, 7327, 7333: Inductor kept ``t * 0.5`` in float32 before ``.float()``; eager rounds it to
    # bfloat16 first (visible on subnormals and odd mantissas)
    def fn(t):
        return (t * 0.5).float(), (t * 0.3 + t).float()

    tiny = torch.finfo(dtype).tiny
    t = torch.tensor([tiny, 0.3 * tiny, -0.27 * tiny, 1.0, -1.6220703125, 0.58943], dtype=dtype)
    t = torch.cat([t, torch.randn(64, generator=torch.Generator().manual_seed(0)).to(dtype)])
    for got, want in zip(thunder.jit(fn, executors=[inductor_ex])(t), fn(t)):
        assert torch.equal(got, want)


def test_fuzz_7254_bfloat16_halved(inductor_ex):
    program = Program(seed=7254, tensors=[TensorInput(name="t0", dims=("C",), dtype="bfloat16", requires_grad=False)],
                      numbers=[], variants=[{"A": 2, "B": 2, "C": 2, "n0": 6}],
                      body=["if FLAG:\n    v0 = t0 * G\nelse:\n    v0 = t0 - 1", "v2 = v0.float()"], returns=["v2"])
    outcome = run_program(program, cache="constant values", executors=["inductor", "torch"],
                          calls=[Call(variant=0, values=10, state=1)])
    assert outcome.cls in AGREEMENT, outcome.detail


def test_fuzz_7297_input_read_only_by_dead_code_before_a_split_has_no_grad(inductor_ex):
    # with the program split at .tolist(), the first segment's outputs the loss does not use (v0, v4) get zero
    # cotangents; its fused backward, one region for both gradients, was taken as one op making t0's gradient depend
    # on every cotangent, so the zero stayed where eager's is None (tests/test_unreached_inputs.py: the islands)
    program = Program(
        seed=7297,
        tensors=[TensorInput(name="t0", dims=("B", 1), dtype="float32", requires_grad=True),
                 TensorInput(name="t1", dims=(1, 1), dtype="float32", requires_grad=False),
                 TensorInput(name="t2", dims=("B", 1), dtype="float32", requires_grad=True)],
        numbers=[], variants=[{"A": 2, "B": 2, "C": 2, "n0": 2}],
        body=["v0 = torch.cat((t1, t0.to(t1.dtype)))", "v1 = t2[:, ::2]", "v3 = torch.stack([r * 2 for r in v1])",
              "v4 = torch.cat([a for a, b in zip(v0, v0)])", "v5 = v1.tolist()"],
        returns=["v3"])
    outcome = run_program(program, cache="constant values", executors=["inductor", "torch"],
                          calls=[Call(variant=0, values=0, state=0)])
    assert outcome.cls in AGREEMENT, outcome.detail


@pytest.mark.filterwarnings("ignore::thunder_inductor.compile.InductorCompileWarning")
@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("seed", [7711, 7739, 7767])
def test_regions_inductor_cannot_compile_run_their_torch_calls(inductor_ex, seed, cache):
    # seeds 7700..7849: Inductor failed recording symbolic regions (AOTAutograd merging inputs that share memory
    # into a synthetic base: an internal error; a placeholder without a recorded value): such a region now runs its
    # torch calls, with an InductorCompileWarning
    from thunder.testing.fuzz.generator import generate

    outcome = run_program(generate(seed, grad_fraction=0.25), cache=cache, executors=["inductor", "torch", "python"])
    assert outcome.cls in AGREEMENT, outcome.detail


@pytest.mark.parametrize("seed", [7768, 7802])
def test_a_graph_compiled_for_inputs_sharing_memory_runs(inductor_ex, seed, tmp_path, monkeypatch):
    # seeds 7768, 7802: a region writing an input and reading a view of it (inputs sharing memory) was compiled by
    # AOTAutograd into a graph over a "synthetic base" that failed when called; such a region runs its torch calls
    # a fresh Inductor cache: whether Inductor fails compiling (the region then falls back) or when called must not
    # depend on what an earlier run left in the cache
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    from thunder.testing.fuzz.generator import generate

    outcome = run_program(generate(seed, grad_fraction=0.25), cache="constant values",
                          executors=["inductor", "torch", "python"])
    assert outcome.cls in AGREEMENT, outcome.detail


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_a_region_writing_an_input_it_also_reads_through_a_view_is_eager(inductor_ex, cache, tmp_path, monkeypatch):
    # the kind of seeds 7768, 7802: the regions write x and read views of x (their inputs share memory)
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))

    def fn(x, y):
        v = x.unsqueeze(0)
        v.mul_(2)
        w = x.unflatten(0, (x.shape[0], 1))
        b = torch.logical_or(v, v)  # not Inductor's: the next region gets w and x, which share memory
        w.neg_()
        x.transpose(0, 1)[0].add_(y[: x.shape[0], None])
        return torch.cumsum(v, -4) + 1, (w * 3).sum(), b, x.transpose(0, 2) * 2

    jf = thunder.jit(fn, executors=[inductor_ex], cache=cache)
    for shape in [(3, 5, 2), (3, 5, 2), (4, 2, 2), (6, 6, 3)]:
        x = torch.randint(-5, 5, shape)
        y = torch.randint(-5, 5, (6,))
        ex = x.clone()
        got, want = jf(x, y), fn(ex, y)
        assert all(torch.equal(g, w) for g, w in zip(got, want)) and torch.equal(x, ex)


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("seed", [7940, 7967])
def test_the_callers_update_of_an_output_fails_the_backward_as_eager(inductor_ex, seed, cache):
    # seeds 7940..7979 (the seventh session's review), the caller updating a returned output before the backward:
    # a fused composite's backward recomputed its outputs from its inputs, so `tanh(t0[-1])` updated by the caller ran
    # where eager (which saves tanh's result) fails, and `t1.roll(n).reshape(...)` kept roll's result saved for the
    # recomputed reshape and failed where eager saves nothing. The call's own outputs are read, not recomputed
    from thunder.testing.fuzz.generator import generate

    outcome = run_program(generate(seed, grad_fraction=0.25), cache=cache, executors=["inductor", "torch", "python"])
    assert outcome.cls in AGREEMENT, outcome.detail
