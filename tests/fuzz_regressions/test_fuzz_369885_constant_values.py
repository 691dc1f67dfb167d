"""Fuzzer regression (seed 369885, cache="constant values"): eager names the broadcast shape of the output and the
value together in a copy_'s shape error ([1, 2], not the value's [2])."""


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
#         v0 = torch.logical_not(t0)
#         v1 = torch.logical_and(t0, v0)
#         v4 = v0[None, 1:, ...]
#         v4.copy_(v1)
#         return None
PROGRAM = Program(seed=369885,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='bool', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': 1.21}, {'A': 2, 'B': 2, 'C': 2, 'f0': -0.06},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -0.06}],
        body=['v0 = torch.logical_not(t0)', 'v1 = torch.logical_and(t0, v0)', 'v4 = v0[None, 1:, ...]',
              'v4.copy_(v1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
