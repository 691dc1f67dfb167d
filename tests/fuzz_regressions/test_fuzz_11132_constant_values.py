"""Fuzzer regression (seed 11132, cache='constant values'): mismatch: no exception, eager RuntimeError: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please c"""


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
#     def fn(t0):  # first call: t0: float32 (B=2, C=2, B=2)
#         v0 = t0.reshape(t0.shape)
#         v3 = v0.argmax(0)
#         v3[torch.tensor([0])] = v3[1:2]
#         return None
PROGRAM = Program(seed=11132,
        tensors=[TensorInput(name='t0', dims=('B', 'C', 'B'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -1.7, 'n0': 3},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -1.6, 'n0': 3},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -1.6, 'n0': 3}],
        body=['v0 = t0.reshape(t0.shape)', 'v3 = v0.argmax(0)', 'v3[torch.tensor([0])] = v3[1:2]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
