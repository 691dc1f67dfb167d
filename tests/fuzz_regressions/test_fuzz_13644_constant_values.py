"""Fuzzer regression (seed 13644, cache='constant values'): refusal: UnsupportedError: prims.copy_to_out_(x, out=x) promises that x is not used afterwards, but amax reads it; this is a bug in a transform or an executor: please fi"""


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
#     def fn(t0, t1):  # first call: t0: float32 (B=2); t1: float32 (B=2)
#         v0 = t0.movedim(-1, 0)
#         t1.copy_(v0)
#         v2 = v0.amax(-1)
#         return v2,
PROGRAM = Program(seed=13644,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=('B',), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 1}, {'A': 2, 'B': 2, 'C': 2, 'n0': 3},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 3}],
        body=['v0 = t0.movedim(-1, 0)', 't1.copy_(v0)', 'v2 = v0.amax(-1)'],
        returns=['v2'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
