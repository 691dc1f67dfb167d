"""Fuzzer regression (seed 27, cache='constant values'): refusal: UnsupportedError: torch.Tensor.iter (__iter__) is not supported by thunder yet ; rewrite the code without it or file an issue"""


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
#     def fn(t0):  # first call: t0: float32 (B=2, A=2, C=2)
#         if FLAG:
#             v1 = t0 * G
#         else:
#             v1 = t0 - 1
#         v2 = sum(v1)
#         return None
PROGRAM = Program(seed=27,
        tensors=[TensorInput(name='t0', dims=('B', 'A', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['if FLAG:\n    v1 = t0 * G\nelse:\n    v1 = t0 - 1', 'v2 = sum(v1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
