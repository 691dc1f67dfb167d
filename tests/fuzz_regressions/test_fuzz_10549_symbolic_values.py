"""Fuzzer regression (seed 10549, cache='symbolic values'): crash: TypeError: unsupported operand type(s) for >>: 'IntegerProxy' and 'int'"""


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
#     def fn(t0, t1):  # first call: t0: float32 (C=2, C=2, A=2); t1: int64 (C=2, C=2, A=2)
#         v0 = torch.cat((t0, t1.to(t0.dtype)))
#         v4 = v0.shape[2] >> 1
#         return None
PROGRAM = Program(seed=10549,
        tensors=[TensorInput(name='t0', dims=('C', 'C', 'A'), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=('C', 'C', 'A'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = torch.cat((t0, t1.to(t0.dtype)))', 'v4 = v0.shape[2] >> 1'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
