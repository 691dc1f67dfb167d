"""Fuzzer regression (seed 209897, cache='constant values'): mismatch: grad of input N: True, eager False"""



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
#     def fn(t0, t1):  # first call: t0: float32 (C=2, B=2, A=2, A=2) requires_grad; t1: float64 (1, B=2, 1, A=2) requires_grad
#         v0 = t1.mean()
#         v5 = t0[0, 1]
#         v6 = v5 @ v5.mT
#         v7 = v6[(v6 > 0).nonzero(as_tuple=True)]
#         return v5,
PROGRAM = Program(seed=209897,
        tensors=[TensorInput(name='t0', dims=('C', 'B', 'A', 'A'), dtype='float32', requires_grad=True),
                 TensorInput(name='t1', dims=(1, 'B', 1, 'A'), dtype='float64', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 3}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v0 = t1.mean()', 'v5 = t0[0, 1]', 'v6 = v5 @ v5.mT',
              'v7 = v6[(v6 > 0).nonzero(as_tuple=True)]'],
        returns=['v5'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
