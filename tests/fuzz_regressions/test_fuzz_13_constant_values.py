"""Fuzzer regression (seed 13, cache='constant values'): mismatch: LOG (side effects)[N]: type tuple, eager Size"""


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
#     def fn(t1):  # first call: t1: float32 (C=2, A=2)
#         LOG.append(t1.shape)
#         return None
PROGRAM = Program(seed=13,
        tensors=[TensorInput(name='t1', dims=('C', 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': 1.31}, {'A': 2, 'B': 2, 'C': 2, 'f0': 0.98},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.98}],
        body=['LOG.append(t1.shape)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
