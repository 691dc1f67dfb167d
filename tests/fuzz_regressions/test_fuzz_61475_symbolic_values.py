"""Fuzzer regression (seed 61475, cache='symbolic values'): crash: AssertionError: internal error: backward reads the number iN, defined nowhere in the forward"""


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
#     def fn(t0):  # first call: t0: float32 (C=2, B=2) requires_grad
#         v0 = t0.narrow(1, 0, 1)
#         v1 = v0.chunk(2, -2)[-1]
#         return v1,
PROGRAM = Program(seed=61475,
        tensors=[TensorInput(name='t0', dims=('C', 'B'), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = t0.narrow(1, 0, 1)', 'v1 = v0.chunk(2, -2)[-1]'],
        returns=['v1'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
