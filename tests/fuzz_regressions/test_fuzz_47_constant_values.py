"""Fuzzer regression (seed 47, cache='constant values'): crash: RuntimeError: where expected condition to be a boolean tensor, but got a tensor with dtype Double"""


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
#     def fn(t0):  # first call: t0: float64 (B=2)
#         v1 = t0.std(-1)
#         v2 = t0.where(t0 > 0, v1)
#         v5 = 3.0 - v2
#         return v5,
PROGRAM = Program(seed=47,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='float64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': 0.09}, {'A': 2, 'B': 2, 'C': 2, 'f0': -0.56},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -0.56}],
        body=['v1 = t0.std(-1)', 'v2 = t0.where(t0 > 0, v1)', 'v5 = 3.0 - v2'],
        returns=['v5'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
