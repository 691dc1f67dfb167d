"""Fuzzer regression (seed 139, cache='constant values'): refusal: UnsupportedError: torch.Tensor.t_ is not supported by thunder yet : it modifies its input in place, and in-place operations need functionalization, which comes """


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
#     def fn():  # first call:
#         v4 = torch.tensor([0, 2])
#         v4.t_()
#         return None
PROGRAM = Program(seed=139,
        tensors=[],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v4 = torch.tensor([0, 2])', 'v4.t_()'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
