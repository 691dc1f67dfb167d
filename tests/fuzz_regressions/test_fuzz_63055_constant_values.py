"""Fuzzer regression (seed 63055, cache='constant values'): mismatch: output[i]: requires_grad False, eager True (contiguous() of a contiguous input returned with it)"""


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
#     def fn(t1):  # first call: t1: float32 () requires_grad
#         v2 = t1.contiguous()
#         return v2, t1
PROGRAM = Program(seed=63055,
        tensors=[TensorInput(name='t1', dims=(), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v2 = t1.contiguous()'],
        returns=['v2', 't1'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
