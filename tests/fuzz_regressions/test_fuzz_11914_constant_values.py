"""Fuzzer regression (seed 11914, cache='constant values'): crash: RuntimeError: both arguments to matmul need to be at least ND, but they are ND and ND"""


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
#     def fn(t0, t1, n0):  # first call: t0: float32 (C=2, A=2); t1: float32 (A=2) requires_grad; n0 = 4
#         v0 = t0[0]
#         v0.zero_()
#         v2 = torch.sqrt(torch.abs(t1))
#         v5 = v2 * n0
#         v8 = torch.nn.functional.linear(v5, v0)
#         return v8,
PROGRAM = Program(seed=11914,
        tensors=[TensorInput(name='t0', dims=('C', 'A'), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=('A',), dtype='float32', requires_grad=True)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 4}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v0 = t0[0]\nv0.zero_()', 'v2 = torch.sqrt(torch.abs(t1))', 'v5 = v2 * n0',
              'v8 = torch.nn.functional.linear(v5, v0)'],
        returns=['v8'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
