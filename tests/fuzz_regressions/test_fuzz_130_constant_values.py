"""Fuzzer regression (seed 130, cache='constant values'): mismatch: input N after the call: values differ"""


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
#     def fn(t1):  # first call: t1: float32 (C=2, C=2)
#         v0 = t1.mean(-2)
#         v1 = t1.unsqueeze(0)
#         v1[...] = 5
#         v0.expand(2, *v0.shape).add_(1)
#         return None
PROGRAM = Program(seed=130,
        tensors=[TensorInput(name='t1', dims=('C', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -1.89}, {'A': 2, 'B': 2, 'C': 2, 'f0': 1.26},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 1.26}],
        body=['v0 = t1.mean(-2)', 'v1 = t1.unsqueeze(0)\nv1[...] = 5', 'v0.expand(2, *v0.shape).add_(1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
