"""Fuzzer regression (seed 342485, cache="constant values"): the zero cotangent of an output the loss does not use
met sqrt's infinite derivative inside the backward (NaN gradient); eager never runs that branch."""

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
#     def fn(t0, n0):  # first call: t0: float32 (B=2, 1, C=2) requires_grad; n0 = 4
#         v0 = sum(t0)
#         v2 = torch.nan_to_num(v0.log())
#         v3 = torch.sqrt(torch.abs(v2))
#         v4 = v3[(v3 > 0).nonzero(as_tuple=True)]
#         v6 = sum(v2)
#         v7 = v6 + torch.tensor(n0)
#         v11 = v7[1:]
#         return v11,
PROGRAM = Program(seed=342485,
        tensors=[TensorInput(name='t0', dims=('B', 1, 'C'), dtype='float32', requires_grad=True)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 4}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v0 = sum(t0)', 'v2 = torch.nan_to_num(v0.log())', 'v3 = torch.sqrt(torch.abs(v2))',
              'v4 = v3[(v3 > 0).nonzero(as_tuple=True)]', 'v6 = sum(v2)', 'v7 = v6 + torch.tensor(n0)',
              'v11 = v7[1:]'],
        returns=['v11'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
