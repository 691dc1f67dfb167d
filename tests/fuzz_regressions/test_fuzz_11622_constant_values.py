"""Fuzzer regression (seed 11622, cache='constant values'): mismatch: grad of input N: values differ"""


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
#     def fn(t0, t1):  # first call: t0: float32 (B=2, A=2); t1: float64 (B=2, A=2) requires_grad
#         v1 = t1 + t0
#         t0.neg_()
#         v4 = torch.nn.functional.gelu(v1)
#         return v4,
PROGRAM = Program(seed=11622,
        tensors=[TensorInput(name='t0', dims=('B', 'A'), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=('B', 'A'), dtype='float64', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 3}, {'A': 2, 'B': 2, 'C': 2, 'n0': 3},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 3}],
        body=['v1 = t1 + t0', 't0.neg_()', 'v4 = torch.nn.functional.gelu(v1)'],
        returns=['v4'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
