"""Fuzzer regression (seed 1872, cache='constant values'): mismatch: output[i]: values differ"""


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
#     def fn(t0, t1):  # first call: t0: float32 (B=3, C=2); t1: float32 (C=2)
#         v0 = torch.zeros_like(t1)
#         v0.copy_(t1)
#         t1.mul_(2)
#         v1 = torch.minimum(v0, t0)
#         return v1,
PROGRAM = Program(seed=1872,
        tensors=[TensorInput(name='t0', dims=('B', 'C'), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=('C',), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 3, 'C': 2}, {'A': 2, 'B': 3, 'C': 2}, {'A': 2, 'B': 3, 'C': 2}],
        body=['v0 = torch.zeros_like(t1)', 'v0.copy_(t1)', 't1.mul_(2)', 'v1 = torch.minimum(v0, t0)'],
        returns=['v1'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
