"""Fuzzer regression (seed 53, cache='symbolic values'): crash: UnboundLocalError: cannot access local variable 'iN' where it is not associated with a value"""


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
#     def fn(t0):  # first call: t0: float32 (C=2, C=2)
#         v3 = t0 @ t0.mT
#         v5 = v3.view(-1)
#         v5.zero_()
#         return v5,
PROGRAM = Program(seed=53,
        tensors=[TensorInput(name='t0', dims=('C', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -1.21}, {'A': 2, 'B': 2, 'C': 2, 'f0': -1.49},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -1.49}],
        body=['v3 = t0 @ t0.mT', 'v5 = v3.view(-1)\nv5.zero_()'],
        returns=['v5'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
