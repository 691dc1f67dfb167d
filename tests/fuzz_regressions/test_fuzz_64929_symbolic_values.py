"""Fuzzer regression (seed 64929, cache='symbolic values'): crash: UnboundLocalError: cannot access local variable 'iN' where it is not associated with a value (a size read inside a kept decomposition, defined by a dropped view)"""


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
#     def fn(t0):  # first call: t0: int64 (A=3, B=2)
#         v0 = t0[1:-1:2]
#         t0.add_(1)
#         v2 = v0.view(-1)
#         v2.add_(1)
#         return None
PROGRAM = Program(seed=64929,
        tensors=[TensorInput(name='t0', dims=('A', 'B'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 3, 'B': 2, 'C': 2}, {'A': 3, 'B': 2, 'C': 2}, {'A': 3, 'B': 2, 'C': 2}],
        body=['v0 = t0[1:-1:2]', 't0.add_(1)', 'v2 = v0.view(-1)', 'v2.add_(1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
