"""Fuzzer regression (seed 20460, cache='constant values'): mismatch: LOG (side effects): length N eager N"""


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
#     def fn(t1, n0):  # first call: t1: float32 (A=2); n0 = 1
#         LOG.append(n0)
#         t1[:, 1:] = 0
#         return None
PROGRAM = Program(seed=20460,
        tensors=[TensorInput(name='t1', dims=('A',), dtype='float32', requires_grad=False)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 1}, {'A': 2, 'B': 2, 'C': 2, 'n0': 6},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 6}],
        body=['LOG.append(n0)', 't1[:, 1:] = 0'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
