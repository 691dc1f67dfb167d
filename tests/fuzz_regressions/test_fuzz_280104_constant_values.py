"""Fuzzer regression (seed 280104, cache="constant values"): an overlapping copy_ of a chunk gave a broadcast error
where eager reports the memory overlap first (TensorIterator checks overlap before shapes)."""

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
#     def fn(t1):  # first call: t1: int64 (B=5, A=2)
#         v0 = t1[1:]
#         v2 = v0.chunk(2, 0)[-1]
#         v2.copy_(t1)
#         return None
PROGRAM = Program(seed=280104,
        tensors=[TensorInput(name='t1', dims=('B', 'A'), dtype='int64', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 5, 'C': 2}, {'A': 2, 'B': 5, 'C': 2}, {'A': 2, 'B': 4, 'C': 2}],
        body=['v0 = t1[1:]', 'v2 = v0.chunk(2, 0)[-1]', 'v2.copy_(t1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
