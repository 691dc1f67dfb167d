"""Fuzzer regression (seed 16, cache='constant values'): refusal: UnsupportedError: an in-place update of the result of torch.expand : writing through an expanded view is refused by PyTorch as well (several elements share memo"""


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
#     def fn(t1):  # first call: t1: float32 (C=2, C=2)
#         v1 = t1.unsqueeze(-1).expand(*t1.shape, 2)
#         v3 = v1.split(1, -1)[0]
#         v5 = v3.narrow(0, 0, 1)
#         v5.add_(1)
#         return None
PROGRAM = Program(seed=16,
        tensors=[TensorInput(name='t1', dims=('C', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 5}, {'A': 2, 'B': 2, 'C': 2, 'n0': 6},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 6}],
        body=['v1 = t1.unsqueeze(-1).expand(*t1.shape, 2)', 'v3 = v1.split(1, -1)[0]',
              'v5 = v3.narrow(0, 0, 1)\nv5.add_(1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
