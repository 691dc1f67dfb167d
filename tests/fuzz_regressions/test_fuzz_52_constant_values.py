"""Fuzzer regression (seed 52, cache='constant values'): mismatch: output[i]: requires_grad True, eager False"""


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
#     def fn(t0, t1):  # first call: t0: int64 (); t1: float32 () requires_grad
#         v1 = torch.full_like(t1, 2)
#         v9 = torch.lerp(v1.float(), t0.float(), 0.25)
#         return v9,
PROGRAM = Program(seed=52,
        tensors=[TensorInput(name='t0', dims=(), dtype='int64', requires_grad=False),
                 TensorInput(name='t1', dims=(), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 5}, {'A': 2, 'B': 2, 'C': 2, 'n0': 4},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 4}],
        body=['v1 = torch.full_like(t1, 2)', 'v9 = torch.lerp(v1.float(), t0.float(), 0.25)'],
        returns=['v9'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
