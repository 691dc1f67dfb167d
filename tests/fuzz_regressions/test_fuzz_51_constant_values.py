"""Fuzzer regression (seed 51, cache='constant values'): mismatch: output[i]: value '(N)', eager 'torch.Size([N])'"""


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
#     def fn(t0):  # first call: t0: float32 (A=2, A=2, B=2, B=2)
#         v3 = f'{t0.shape}'
#         return v3,
PROGRAM = Program(seed=51,
        tensors=[TensorInput(name='t0', dims=('A', 'A', 'B', 'B'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=["v3 = f'{t0.shape}'"],
        returns=['v3'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
