"""Fuzzer regression (seed 50, cache='constant values'): refusal: UnsupportedError: a tensor that is neither an input nor reachable from one reached a torch operation at <fuzz program N>:N (e.g. created at import time and stor"""


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
#     def fn():  # first call:
#         v3 = torch.eye(3)
#         v4 = v3.transpose(0, -1)
#         v4.add_(1)
#         return None
PROGRAM = Program(seed=50,
        tensors=[],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 2}, {'A': 2, 'B': 2, 'C': 2, 'n0': 3},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 3}],
        body=['v3 = torch.eye(3)', 'v4 = v3.transpose(0, -1)\nv4.add_(1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
