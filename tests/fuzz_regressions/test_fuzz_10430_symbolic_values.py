"""Fuzzer regression (seed 10430, cache='symbolic values'): crash: TypeError: unsupported operand type(s) for *: 'Tensor' and 'FloatProxy'"""


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
#     def fn(t1):  # first call: t1: float32 (C=2, A=2)
#         v0 = t1.sum((-1,))
#         v1 = torch.eye(v0.shape[-1])
#         if FLAG:
#             v3 = v1 * G
#         else:
#             v3 = v1 - 1
#         return None
PROGRAM = Program(seed=10430,
        tensors=[TensorInput(name='t1', dims=('C', 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = t1.sum((-1,))', 'v1 = torch.eye(v0.shape[-1])',
              'if FLAG:\n    v3 = v1 * G\nelse:\n    v3 = v1 - 1'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
