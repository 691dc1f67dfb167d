"""Fuzzer regression (seed 12645, cache='symbolic values'): crash: ZeroDivisionError: float division by zero"""


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
#     def fn(t0, t1):  # first call: t0: float32 (1, C=2, A=2, 1); t1: float32 (1, C=2, A=2, 1) requires_grad
#         v0 = torch.mul(t0, t0)
#         v2 = torch.add(v0, G)
#         v4 = t1 / v2
#         v6 = v4.var(0, keepdim=True)
#         return v6,
PROGRAM = Program(seed=12645,
        tensors=[TensorInput(name='t0', dims=(1, 'C', 'A', 1), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=(1, 'C', 'A', 1), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': 1.64, 'n0': 6},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.68, 'n0': 5},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.68, 'n0': 5}],
        body=['v0 = torch.mul(t0, t0)', 'v2 = torch.add(v0, G)', 'v4 = t1 / v2',
              'v6 = v4.var(0, keepdim=True)'],
        returns=['v6'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
