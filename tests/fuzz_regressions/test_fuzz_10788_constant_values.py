"""Fuzzer regression (seed 10788, cache='constant values'): crash: IndexError: tuple index out of range"""


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
#     def fn(t0, t2):  # first call: t0: int64 (A=2, C=2, A=2); t2: float32 ()
#         v0 = torch.sub(t0, t2)
#         v4 = v0[1:-1:2]
#         v5 = torch.erf(v4)
#         v8 = v5.split(1, 0)[0]
#         return None
PROGRAM = Program(seed=10788,
        tensors=[TensorInput(name='t0', dims=('A', 'C', 'A'), dtype='int64', requires_grad=False),
                 TensorInput(name='t2', dims=(), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': 0.37, 'n0': 1},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -1.33, 'n0': 4},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -1.33, 'n0': 4}],
        body=['v0 = torch.sub(t0, t2)', 'v4 = v0[1:-1:2]', 'v5 = torch.erf(v4)', 'v8 = v5.split(1, 0)[0]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
