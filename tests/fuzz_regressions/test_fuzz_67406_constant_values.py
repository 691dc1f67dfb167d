"""Fuzzer regression (seed 67406, cache='constant values'): mismatch: output[i]: requires_grad False, eager True (flatten() of a 1-D input is the input itself)"""


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
#     def fn(t0):  # first call: t0: float64 (B=2) requires_grad
#         v1 = t0.flatten()
#         return v1, t0
PROGRAM = Program(seed=67406,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='float64', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v1 = t0.flatten()'],
        returns=['v1', 't0'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
