"""Fuzzer regression (seed 10837, cache='constant values'): mismatch: no exception, eager IndexError: index N is out of bounds for dimension N with size N"""


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
#     def fn(t2, n0):  # first call: t2: int64 (C=2, A=2); n0 = 2
#         v1 = torch.pow(t2.abs() + 1, 2)
#         v4 = v1.sum(n0 % v1.dim())
#         v5 = torch.where(v4 > 0, v4, -1)
#         v6 = v5[v5]
#         return None
PROGRAM = Program(seed=10837,
        tensors=[TensorInput(name='t2', dims=('C', 'A'), dtype='int64', requires_grad=False)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': 0.93, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -0.18, 'n0': 1},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -0.18, 'n0': 1}],
        body=['v1 = torch.pow(t2.abs() + 1, 2)', 'v4 = v1.sum(n0 % v1.dim())',
              'v5 = torch.where(v4 > 0, v4, -1)', 'v6 = v5[v5]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
