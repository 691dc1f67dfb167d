"""Fuzzer regression (seed 11301, cache='constant values'): mismatch: no exception, eager RuntimeError: view size is not compatible with input tensor's size and stride . Use .reshape(...) instead."""


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
#     def fn(t0):  # first call: t0: int64 (A=2, B=2, C=2)
#         v1 = t0.unsqueeze(0)
#         v1.mul_(2)
#         v2 = v1.mT.view(-1)
#         return None
PROGRAM = Program(seed=11301,
        tensors=[TensorInput(name='t0', dims=('A', 'B', 'C'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v1 = t0.unsqueeze(0)\nv1.mul_(2)', 'v2 = v1.mT.view(-1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
