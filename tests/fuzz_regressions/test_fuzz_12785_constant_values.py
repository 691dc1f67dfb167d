"""Fuzzer regression (seed 12785, cache='constant values'): mismatch: output[i]: values differ"""


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
#     def fn(t0):  # first call: t0: float32 (C=2, C=2)
#         v0 = t0.mT.contiguous()
#         v5 = v0.unsqueeze(0)
#         v5.zero_()
#         return t0,
PROGRAM = Program(seed=12785,
        tensors=[TensorInput(name='t0', dims=('C', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 4}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v0 = t0.mT.contiguous()', 'v5 = v0.unsqueeze(0)\nv5.zero_()'],
        returns=['t0'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
