"""Fuzzer regression (seed 90198, cache='symbolic values'): crash: AssertionError: internal error: backward reads the number iN, defined nowhere in the forward"""


from thunder.testing.fuzz.program import Call, NumberInput, Program, TensorInput  # noqa: F401
from thunder.testing.fuzz.runner import AGREEMENT, run_program

# The program, shrunk by hand from fuzz seed 90198 (nox -s fuzz -- --seed 90000): the getitem's decomposition is
# recomputed in the backward, an opaque logsumexp reads its result and the cheap abs/log1p chain is recomputed too
#     def fn(t0):  # first call: t0: float32 (A=2, A=2) requires_grad
#         v1 = t0[-1]
#         v7 = torch.logsumexp(v1, -1)
#         v9 = torch.log1p(torch.abs(t0))
#         return v9, v7
PROGRAM = Program(seed=90198,
        tensors=[TensorInput(name='t0', dims=('A', 'A'), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}],
        body=['v1 = t0[-1]', 'v7 = torch.logsumexp(v1, -1)', 'v9 = torch.log1p(torch.abs(t0))'],
        returns=['v9', 'v7'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
