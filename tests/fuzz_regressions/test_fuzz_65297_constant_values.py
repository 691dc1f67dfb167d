"""Fuzzer regression (seed 65297, cache='constant values'): crash: RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single memory location (index list setitem of a scalar through an expand)"""


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
#     def fn(t1):  # first call: t1: float32 (B=2, C=2, A=2, C=2)
#         v1 = t1.expand(2, *t1.shape)
#         v1[[0, 1]] = 2
#         return None
PROGRAM = Program(seed=65297,
        tensors=[TensorInput(name='t1', dims=('B', 'C', 'A', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v1 = t1.expand(2, *t1.shape)\nv1[[0, 1]] = 2'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
