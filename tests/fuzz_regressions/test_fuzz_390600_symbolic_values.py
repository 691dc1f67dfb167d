"""Fuzzer regression (seed 390600, cache='symbolic values'): crash: KeyError: 'x'"""


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
#     def fn(t0, t1):  # first call: t0: float32 (A=3, A=3); t1: float32 (C=3)
#         v1 = t1[0]
#         v1.mul_(2)
#         v2 = t1[t1 > 0]
#         v3 = torch.log_softmax(v2, dim=0)
#         return None
PROGRAM = Program(seed=390600,
        tensors=[TensorInput(name='t0', dims=('A', 'A'), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=('C',), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 3, 'B': 2, 'C': 3, 'n0': 2}, {'A': 3, 'B': 2, 'C': 3, 'n0': 3},
                  {'A': 3, 'B': 2, 'C': 3, 'n0': 3}],
        body=['v1 = t1[0]\nv1.mul_(2)', 'v2 = t1[t1 > 0]', 'v3 = torch.log_softmax(v2, dim=0)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0), Call(variant=0, values=1, state=0), Call(variant=0, values=10, state=1)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
