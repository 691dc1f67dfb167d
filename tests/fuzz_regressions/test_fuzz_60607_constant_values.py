"""Fuzzer regression (seed 60607, cache='constant values'): mismatch: exception message of RuntimeError: Attempting to broadcast a dimension of length N (an opaque call's meta message)"""


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
#     def fn(t0, t1):  # first call: t0: int64 (B=2, A=2); t1: int64 (B=2, A=2, C=3, A=2)
#         v2 = torch.logical_and(t1, t0)
#         return None
PROGRAM = Program(seed=60607,
        tensors=[TensorInput(name='t0', dims=('B', 'A'), dtype='int64', requires_grad=False),
                 TensorInput(name='t1', dims=('B', 'A', 'C', 'A'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 3}, {'A': 2, 'B': 2, 'C': 3}, {'A': 2, 'B': 2, 'C': 3}],
        body=['v2 = torch.logical_and(t1, t0)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
