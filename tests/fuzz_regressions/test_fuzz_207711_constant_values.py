"""Fuzzer regression (seed 207711, cache='constant values'): mismatch: grad of input N: values differ"""



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
#     def fn(t0, t1):  # first call: t0: bfloat16 (B=2); t1: float32 () requires_grad
#         v0 = t1.reshape(t1.shape)
#         v6 = torch.add(v0, t0, alpha=2)
#         return v6,
PROGRAM = Program(seed=207711,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='bfloat16', requires_grad=False),
                 TensorInput(name='t1', dims=(), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = t1.reshape(t1.shape)', 'v6 = torch.add(v0, t0, alpha=2)'],
        returns=['v6'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
