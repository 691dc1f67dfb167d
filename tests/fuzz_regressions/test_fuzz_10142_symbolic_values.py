"""Fuzzer regression (seed 10142, cache='symbolic values'): crash: TypeError: type FloatProxy doesn't define __round__ method"""


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
#     def fn(t0):  # first call: t0: float32 (B=2, A=2)
#         v1 = round(t0.shape[1] / 3)
#         return None
PROGRAM = Program(seed=10142,
        tensors=[TensorInput(name='t0', dims=('B', 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 4}, {'A': 2, 'B': 2, 'C': 2, 'n0': 1},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 1}],
        body=['v1 = round(t0.shape[1] / 3)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
