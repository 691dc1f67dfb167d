"""Fuzzer regression (seed 10108, cache='constant values'): mismatch: input N after the call: values differ"""


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
#     def fn(t0, t1):  # first call: t0: float32 (C=2, A=2, B=2); t1: bool (C=2, A=2, B=2)
#         t0[0].mul_(3)
#         v6 = t0.var(2, keepdim=True)
#         v7 = torch.stack([t1, v6])
#         return None
PROGRAM = Program(seed=10108,
        tensors=[TensorInput(name='t0', dims=('C', 'A', 'B'), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=('C', 'A', 'B'), dtype='bool', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['t0[0].mul_(3)', 'v6 = t0.var(2, keepdim=True)', 'v7 = torch.stack([t1, v6])'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
