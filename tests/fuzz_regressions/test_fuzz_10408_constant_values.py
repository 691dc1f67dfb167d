"""Fuzzer regression (seed 10408, cache='constant values'): refusal: UnsupportedError: prims.copy_to_out_(x, out=x) promises that x is not used afterwards, but executors.torch_impls.copy_to_out_ reads it; this is a bug in a trans"""


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
#         t0.fill_(True)
#         t0.fill_(True)
#         return None
PROGRAM = Program(seed=10408,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='bool', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -0.74, 'n0': 4},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.83, 'n0': 1},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.83, 'n0': 1}],
        body=['t0.fill_(True)', 't0.fill_(True)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
