"""Fuzzer regression (seed 60344, cache='constant values'): mismatch: exception message of RuntimeError: output with shape [N] doesn't match the broadcast shape [N], eager: The size of tensor a (N) must match"""


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
#     def fn(t0, n0):  # first call: t0: int64 (C=2, C=2, A=2); n0 = 1
#         v0 = t0.sum(1)
#         v1 = v0 + torch.tensor(n0)
#         v6 = torch.cat([v1, v0], 1)
#         v6.copy_(v1)
#         return None
PROGRAM = Program(seed=60344,
        tensors=[TensorInput(name='t0', dims=('C', 'C', 'A'), dtype='int64', requires_grad=False)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 1}, {'A': 2, 'B': 2, 'C': 2, 'n0': 1},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 1}],
        body=['v0 = t0.sum(1)', 'v1 = v0 + torch.tensor(n0)', 'v6 = torch.cat([v1, v0], 1)', 'v6.copy_(v1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
