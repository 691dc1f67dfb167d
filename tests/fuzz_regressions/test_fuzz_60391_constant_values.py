"""Fuzzer regression (seed 60391, cache='constant values'): mismatch: no exception, eager RuntimeError: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location"""


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
#     def fn(t1):  # first call: t1: float32 (B=2, 1, A=2)
#         t1[torch.tensor([0])] = t1[1:2]
#         return None
PROGRAM = Program(seed=60391,
        tensors=[TensorInput(name='t1', dims=('B', 1, 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['t1[torch.tensor([0])] = t1[1:2]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
