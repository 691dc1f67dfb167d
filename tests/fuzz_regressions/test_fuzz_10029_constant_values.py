"""Fuzzer regression (seed 10029, cache='constant values'): mismatch: exception message of RuntimeError: The size of tensor a (N) must match the size of tensor b (N) at non-singleton dimension N eager: Sizes of tensors must match """


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
#     def fn(t0):  # first call: t0: int64 (B=2, C=2, C=2)
#         v0 = t0[[0, 1]]
#         v1 = v0.amax(2)
#         v2 = torch.neg(v1)
#         v5 = v1.view(v1.shape[0] * v1.shape[1], -1)
#         v10 = torch.cat([v5, v2], 1)
#         return None
PROGRAM = Program(seed=10029,
        tensors=[TensorInput(name='t0', dims=('B', 'C', 'C'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': 0.33, 'n0': 5},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -1.57, 'n0': 4},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -1.57, 'n0': 4}],
        body=['v0 = t0[[0, 1]]', 'v1 = v0.amax(2)', 'v2 = torch.neg(v1)',
              'v5 = v1.view(v1.shape[0] * v1.shape[1], -1)', 'v10 = torch.cat([v5, v2], 1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
