"""Fuzzer regression (seed 5, cache='symbolic values'): crash: TypeError: 'IntegerProxy' object is not iterable"""


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
#     def fn(t1, n0):  # first call: t1: float32 (C=2, C=2); n0 = 3
#         v3 = t1.sum(n0 % t1.dim())
#         return None
PROGRAM = Program(seed=5,
        tensors=[TensorInput(name='t1', dims=('C', 'C'), dtype='float32', requires_grad=False)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 3}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v3 = t1.sum(n0 % t1.dim())'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
