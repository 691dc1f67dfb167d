"""Fuzzer regression (seed 67119, cache='constant values'): crash: RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single memory location (index_put_ through an expand, which eager allows)"""


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
#     def fn(t1):  # first call: t1: float32 (C=2, B=2, A=2, C=2)
#         v0 = torch.cat([t1] * 3, 1)
#         v1 = v0 * 0.5
#         v2 = v1.unsqueeze(-1).expand(*v1.shape, 2)
#         v2[torch.tensor([0])] = v2[1:2]
#         return None
PROGRAM = Program(seed=67119,
        tensors=[TensorInput(name='t1', dims=('C', 'B', 'A', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = torch.cat([t1] * 3, 1)', 'v1 = v0 * 0.5',
              'v2 = v1.unsqueeze(-1).expand(*v1.shape, 2)\nv2[torch.tensor([0])] = v2[1:2]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
