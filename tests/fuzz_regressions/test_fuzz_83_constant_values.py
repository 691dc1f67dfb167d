"""Fuzzer regression (seed 83, cache='constant values'): crash: TypeError: sum(): argument 'input' (position N) must be Tensor, not generator"""


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
#     def fn(t0, t1):  # first call: t0: float32 (1, B=2, B=2); t1: bool (B=2, B=2)
#         t1[t1 > 0] = 0
#         v1 = t1.expand(2, *t1.shape)
#         v2 = torch.sum(v1)
#         return None
PROGRAM = Program(seed=83,
        tensors=[TensorInput(name='t0', dims=(1, 'B', 'B'), dtype='float32', requires_grad=False),
                 TensorInput(name='t1', dims=('B', 'B'), dtype='bool', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 4}, {'A': 2, 'B': 2, 'C': 2, 'n0': 5},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 5}],
        body=['t1[t1 > 0] = 0', 'v1 = t1.expand(2, *t1.shape)', 'v2 = torch.sum(v1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
