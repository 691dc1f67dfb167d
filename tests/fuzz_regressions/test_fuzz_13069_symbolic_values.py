"""Fuzzer regression (seed 13069, cache='symbolic values'): crash: TypeError: unsupported operand type(s) for -: 'IntegerProxy' and 'Tensor'"""


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
#     def fn(t0, n0):  # first call: t0: float32 (C=2); n0 = 4
#         v0 = torch.hstack([t0, t0])
#         v5 = torch.linspace(0, 1, v0.shape[0])
#         v7 = n0 - v5
#         return None
PROGRAM = Program(seed=13069,
        tensors=[TensorInput(name='t0', dims=('C',), dtype='float32', requires_grad=False)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 4}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v0 = torch.hstack([t0, t0])', 'v5 = torch.linspace(0, 1, v0.shape[0])', 'v7 = n0 - v5'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
