"""Fuzzer regression (seed 61045, cache='constant values'): crash: RuntimeError: unsupported operation: more than one element of the written-to tensor refers to a single memory location (eager writes)"""


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
#     def fn(t1):  # first call: t1: int64 (1)
#         v5 = t1.unsqueeze(-1).expand(*t1.shape, 2)
#         v5[..., 0] = G
#         return None
PROGRAM = Program(seed=61045,
        tensors=[TensorInput(name='t1', dims=(1,), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v5 = t1.unsqueeze(-1).expand(*t1.shape, 2)\nv5[..., 0] = G'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
