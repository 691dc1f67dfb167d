"""Fuzzer regression (seed 13657, cache='constant values'): refusal: UnsupportedError: prims.copy_to_out_(x, out=x) promises that x is not used afterwards, but mul reads it; this is a bug in a transform or an executor: please fil"""


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
#     def fn(t0):  # first call: t0: float32 (B=2, A=2)
#         v0 = t0.transpose(0, -1)
#         v0.zero_()
#         v2 = v0.transpose(0, -1)
#         v2.mul_(2)
#         return None
PROGRAM = Program(seed=13657,
        tensors=[TensorInput(name='t0', dims=('B', 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 3}, {'A': 2, 'B': 2, 'C': 2, 'n0': 6},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 6}],
        body=['v0 = t0.transpose(0, -1)\nv0.zero_()', 'v2 = v0.transpose(0, -1)\nv2.mul_(2)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
