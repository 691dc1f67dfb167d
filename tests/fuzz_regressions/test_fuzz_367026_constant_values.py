"""Fuzzer regression (seed 367026, cache='constant values'): crash: UnsupportedError: internal error: the value of x is not known where the program is split; please file an issue"""


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
#     def fn(t0):  # first call: t0: int64 (B=3)
#         v0 = t0.where(t0 > 0, t0)
#         v1 = t0.expand(2, *t0.shape)
#         t0[t0 > 0] = 0
#         if v1.sum() > 0:
#             v7 = v1 + 1
#         else:
#             v7 = v1 - 1
#         return None
PROGRAM = Program(seed=367026,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 3, 'C': 2}, {'A': 2, 'B': 3, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = t0.where(t0 > 0, t0)', 'v1 = t0.expand(2, *t0.shape)', 't0[t0 > 0] = 0',
              'if v1.sum() > 0:\n    v7 = v1 + 1\nelse:\n    v7 = v1 - 1'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0), Call(variant=0, values=1, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
