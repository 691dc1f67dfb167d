"""Fuzzer regression (seed 209037, cache='constant values'): mismatch: exception message of IndexError: index N is out of bounds for dimension N with size N eager: index N is out of bounds for dimension N with size N"""



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
#     def fn(t1):  # first call: t1: float32 (A=2, 1, A=2)
#         v2 = t1[0, 1]
#         return None
PROGRAM = Program(seed=209037,
        tensors=[TensorInput(name='t1', dims=('A', 1, 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -1.26, 'n0': 3},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.35, 'n0': 3},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.35, 'n0': 3}],
        body=['v2 = t1[0, 1]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
