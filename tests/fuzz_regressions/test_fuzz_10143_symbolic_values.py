"""Fuzzer regression (seed 10143, cache='symbolic values'): crash: TypeError: unsupported operand type(s) for |: 'IntegerProxy' and 'int'"""


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
#     def fn(n0):  # first call: n0 = 6
#         v4 = n0 | 1
#         return None
PROGRAM = Program(seed=10143,
        tensors=[],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 6}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v4 = n0 | 1'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
