"""Fuzzer regression (seed 7, cache='constant values'): mismatch: backward: no exception, eager RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor ["""

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
#     def fn(t0, t1, n0):  # first call: t0: float32 (A=2); t1: float32 (1) requires_grad; n0 = 1
#         v1 = t0 * t1
#         t0[..., 0] = n0
#         return v1,
PROGRAM = Program(seed=7,
        tensors=[TensorInput(name='t0', dims=('A',), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=(1,), dtype='float32', requires_grad=True)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 1}, {'A': 2, 'B': 2, 'C': 2, 'n0': 5},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 5}],
        body=['v1 = t0 * t1', 't0[..., 0] = n0'],
        returns=['v1'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
