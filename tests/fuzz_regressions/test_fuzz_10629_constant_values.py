"""Fuzzer regression (seed 10629, cache='constant values'): mismatch: exception message of RuntimeError: matN and matN shapes cannot be multiplied (NxN and NxN), eager: Expected size for first two dimensions of batchN tensor to be"""


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
#     def fn(t0):  # first call: t0: float32 (C=2, C=2, B=2, A=2)
#         v1 = torch.abs(t0)
#         v4 = torch.cat([v1, v1], 2)
#         v5 = v4[-1]
#         v10 = v1 @ v5
#         return None
PROGRAM = Program(seed=10629,
        tensors=[TensorInput(name='t0', dims=('C', 'C', 'B', 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v1 = torch.abs(t0)', 'v4 = torch.cat([v1, v1], 2)', 'v5 = v4[-1]', 'v10 = v1 @ v5'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
