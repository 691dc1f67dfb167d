"""Fuzzer regression (seed 132, cache='constant values'): crash: UnsupportedError: x is returned after prims.copy_to_out_ consumed it; please file an issue"""


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
#     def fn(t0):  # first call: t0: bool (A=2)
#         t0.copy_(t0)
#         return t0,
PROGRAM = Program(seed=132,
        tensors=[TensorInput(name='t0', dims=('A',), dtype='bool', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 6}, {'A': 2, 'B': 2, 'C': 2, 'n0': 6},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 6}],
        body=['t0.copy_(t0)'],
        returns=['t0'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
