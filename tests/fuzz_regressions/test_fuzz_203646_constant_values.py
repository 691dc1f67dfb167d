"""Fuzzer regression (seed 203646, cache='constant values'): mismatch: grad of input N: values differ"""



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
#     def fn(t0):  # first call: t0: float32 (C=3, A=4, C=3, C=3) requires_grad
#         v0 = t0 / t0
#         v4 = torch.cumsum(v0, 2)
#         return v4,
PROGRAM = Program(seed=203646,
        tensors=[TensorInput(name='t0', dims=('C', 'A', 'C', 'C'), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 4, 'B': 2, 'C': 3}, {'A': 4, 'B': 2, 'C': 3}, {'A': 5, 'B': 2, 'C': 2}],
        body=['v0 = t0 / t0', 'v4 = torch.cumsum(v0, 2)'],
        returns=['v4'])
CALLS = [Call(variant=2, values=3, state=0), Call(variant=0, values=10, state=1)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
