"""Fuzzer regression (seed 62141, cache='constant values'): mismatch: no exception, eager RuntimeError: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location (a result of unknown layout)"""


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
#     def fn(t0):  # first call: t0: float32 (A=2)
#         v6 = t0.index_select(0, torch.tensor([1, 0, 1]))
#         v8 = torch.floor(v6)
#         v8[torch.tensor([0])] = v8[1:2]
#         return None
PROGRAM = Program(seed=62141,
        tensors=[TensorInput(name='t0', dims=('A',), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v6 = t0.index_select(0, torch.tensor([1, 0, 1]))', 'v8 = torch.floor(v6)',
              'v8[torch.tensor([0])] = v8[1:2]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
