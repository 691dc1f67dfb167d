"""Fuzzer regression (seed 0, cache='constant values'): mismatch: input N after the call: values differ"""


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
#     def fn(t0):  # first call: t0: float32 (1, B=2, B=2)
#         v0 = t0.mT.reshape(-1)
#         v2 = v0.narrow(0, 0, 1)
#         v2.add_(1)
#         return None
PROGRAM = Program(seed=0,
        tensors=[TensorInput(name='t0', dims=(1, 'B', 'B'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = t0.mT.reshape(-1)', 'v2 = v0.narrow(0, 0, 1)\nv2.add_(1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
