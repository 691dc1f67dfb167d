"""Fuzzer regression (seed 345206, cache='constant values'): mismatch: exception message of RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [N]], whic"""


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
#     def fn(t0, t1):  # first call: t0: float32 (B=2, 1, B=2) requires_grad; t1: int64 (B=2, 1, B=2)
#         v1 = t0.sum(0, keepdim=True)
#         v2 = v1.amin(0)
#         v5 = t1.clamp(max=G)
#         v6 = v5[v5.shape[0] - 1]
#         v7 = v6 * t0
#         v6.mul_(v2)
#         return v7,
PROGRAM = Program(seed=345206,
        tensors=[TensorInput(name='t0', dims=('B', 1, 'B'), dtype='float32', requires_grad=True),
                 TensorInput(name='t1', dims=('B', 1, 'B'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 1}, {'A': 2, 'B': 2, 'C': 2, 'n0': 4},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 4}],
        body=['v1 = t0.sum(0, keepdim=True)', 'v2 = v1.amin(0)', 'v5 = t1.clamp(max=G)',
              'v6 = v5[v5.shape[0] - 1]', 'v7 = v6 * t0', 'v6.mul_(v2)'],
        returns=['v7'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
