"""Fuzzer regression (seed 280788, cache='constant values'): crash: backward: UnboundLocalError: cannot access local variable 'x' where it is not associated with a value"""

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
#     def fn(t0, t1):  # first call: t0: float32 (C=2, C=2) requires_grad; t1: bool (C=2, C=2)
#         v0 = torch.hstack([t0, t0])
#         v1 = torch.sigmoid(v0)
#         if FLAG:
#             v2 = v1 * G
#         else:
#             v2 = v1 - 1
#         v4 = v1.amax(0)
#         t1[t1 > 0] = 0
#         return v4,
PROGRAM = Program(seed=280788,
        tensors=[TensorInput(name='t0', dims=('C', 'C'), dtype='float32', requires_grad=True),
                 TensorInput(name='t1', dims=('C', 'C'), dtype='bool', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = torch.hstack([t0, t0])', 'v1 = torch.sigmoid(v0)',
              'if FLAG:\n    v2 = v1 * G\nelse:\n    v2 = v1 - 1', 'v4 = v1.amax(0)', 't1[t1 > 0] = 0'],
        returns=['v4'])
CALLS = [Call(variant=0, values=10, state=1)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
