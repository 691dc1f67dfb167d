"""Fuzzer regression (seed 28, cache='symbolic values'): crash: AssertionError: internal error: backward reads the number iN, defined nowhere in the forward"""


from thunder.testing.fuzz.program import Call, NumberInput, Program, TensorInput  # noqa: F401
from thunder.testing.fuzz.runner import AGREEMENT, run_program

# The program, as the fuzzer prints it:
#     import torch
#
#     G = 0.5
#     FLAG = True
#     LOG = []
#
#
#     def fn(t0, n0):  # first call: t0: float32 (C=2) requires_grad; n0 = 2
#         v0 = G - t0
#         v1 = v0[torch.tensor([0, -1])]
#         v2 = v1[:n0]
#         return v1, v2
PROGRAM = Program(seed=28,
        tensors=[TensorInput(name='t0', dims=('C',), dtype='float32', requires_grad=True)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 2}, {'A': 2, 'B': 2, 'C': 2, 'n0': 1},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 1}],
        body=['v0 = G - t0', 'v1 = v0[torch.tensor([0, -1])]', 'v2 = v1[:n0]'],
        returns=['v1', 'v2'])
CALLS = [Call(variant=1, values=2, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
