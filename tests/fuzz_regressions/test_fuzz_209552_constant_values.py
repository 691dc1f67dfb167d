"""Fuzzer regression (seed 209552, cache='constant values'): mismatch: exception message of RuntimeError: expected mN and mN to have the same dtype, but got: dtypes.floatN != dtypes.intN, eager: expected scalar type Float but found"""



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
#     def fn(t0, t1):  # first call: t0: int64 (C=4, B=4, C=4); t1: float32 (B=4, C=4, C=4)
#         if FLAG:
#             v0 = t0 * G
#         else:
#             v0 = t0 - 1
#         v2 = torch.matmul(t1, v0)
#         return None
PROGRAM = Program(seed=209552,
        tensors=[TensorInput(name='t0', dims=('C', 'B', 'C'), dtype='int64', requires_grad=False),
                 TensorInput(name='t1', dims=('B', 'C', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 4, 'C': 4}, {'A': 2, 'B': 4, 'C': 4}, {'A': 2, 'B': 2, 'C': 6}],
        body=['if FLAG:\n    v0 = t0 * G\nelse:\n    v0 = t0 - 1', 'v2 = torch.matmul(t1, v0)'],
        returns=[])
CALLS = [Call(variant=0, values=10, state=1)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
