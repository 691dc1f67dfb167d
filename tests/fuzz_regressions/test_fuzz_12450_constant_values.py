"""Fuzzer regression (seed 12450, cache='constant values'): refusal: UnsupportedError: prims.copy_to_out_(x, out=x) promises that x is not used afterwards, but add reads it; this is a bug in a transform or an executor: please fil"""


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
#     def fn(t0):  # first call: t0: int64 (B=2, B=2, B=2)
#         t0.copy_(t0)
#         t0 += 1
#         return None
PROGRAM = Program(seed=12450,
        tensors=[TensorInput(name='t0', dims=('B', 'B', 'B'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 2}, {'A': 2, 'B': 2, 'C': 2, 'n0': 4},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 4}],
        body=['t0.copy_(t0)', 't0 += 1'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
