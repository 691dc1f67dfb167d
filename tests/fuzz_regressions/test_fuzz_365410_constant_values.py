"""Fuzzer regression (seed 365410, cache='constant values'): crash: backward: RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [N]] is at version N;"""


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
#     def fn(t0):  # first call: t0: float32 (B=2, B=2) requires_grad
#         v0 = t0[[0, 1]]
#         with torch.no_grad():
#             v1 = v0 * 2
#         v3 = v1.expand(2, *v1.shape)
#         v6 = torch.matmul(v3, t0)
#         v3[0].mul_(3)
#         return v6,
PROGRAM = Program(seed=365410,
        tensors=[TensorInput(name='t0', dims=('B', 'B'), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = t0[[0, 1]]', 'with torch.no_grad():\n    v1 = v0 * 2', 'v3 = v1.expand(2, *v1.shape)',
              'v6 = torch.matmul(v3, t0)', 'v3[0].mul_(3)'],
        returns=['v6'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
