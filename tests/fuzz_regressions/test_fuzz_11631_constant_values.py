"""Fuzzer regression (seed 11631, cache='constant values'): mismatch: no exception, eager TypeError: ones() missing N required positional arguments: 'size'"""


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
#     def fn(t0):  # first call: t0: bool (B=2)
#         v2 = t0[1:]
#         v10 = torch.ones(*v2.shape[1:])
#         return None
PROGRAM = Program(seed=11631,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='bool', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': 0.07}, {'A': 2, 'B': 2, 'C': 2, 'f0': 0.29},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.29}],
        body=['v2 = t0[1:]', 'v10 = torch.ones(*v2.shape[1:])'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
