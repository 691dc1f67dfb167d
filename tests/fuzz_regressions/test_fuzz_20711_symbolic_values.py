"""Fuzzer regression (seed 20711, cache='symbolic values'): crash: backward: RuntimeError: shape '[N]' is invalid for input of size N"""


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
#     def fn(t0):  # first call: t0: float32 (B=2, C=2, C=2, C=2) requires_grad
#         v0 = torch.where(t0 > 0, t0, G)
#         v4 = v0[0, 1]
#         v5 = torch.atan2(v0.float(), t0.float())
#         v6 = v5 @ v4
#         return v6,
PROGRAM = Program(seed=20711,
        tensors=[TensorInput(name='t0', dims=('B', 'C', 'C', 'C'), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 3}],
        body=['v0 = torch.where(t0 > 0, t0, G)', 'v4 = v0[0, 1]', 'v5 = torch.atan2(v0.float(), t0.float())',
              'v6 = v5 @ v4'],
        returns=['v6'])
CALLS = [Call(variant=1, values=2, state=0), Call(variant=2, values=3, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
