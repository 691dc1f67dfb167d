"""Fuzzer regression (seed 100, cache='constant values'): refusal: UnsupportedError: torch.Tensor.index_fill_ is not supported by thunder yet : it modifies its input in place, and in-place operations need functionalization, whi"""


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
#     def fn(t0):  # first call: t0: int64 (A=2, C=2, C=2)
#         t0.index_fill_(0, torch.tensor([0]), 9)
#         return None
PROGRAM = Program(seed=100,
        tensors=[TensorInput(name='t0', dims=('A', 'C', 'C'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -0.76}, {'A': 2, 'B': 2, 'C': 2, 'f0': 1.07},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 1.07}],
        body=['t0.index_fill_(0, torch.tensor([0]), 9)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
