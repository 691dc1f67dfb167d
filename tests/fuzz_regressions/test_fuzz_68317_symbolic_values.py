"""Fuzzer regression (seed 68317, cache='symbolic values'): mismatch: exception message of RuntimeError: stack expects each tensor to be equal size (a raising entry reused for other sizes)"""


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
#     def fn(t0):  # first call: t0: float32 (A=2, A=2)
#         v0 = t0[1:]
#         v1 = torch.stack([t0, v0])
#         return None
PROGRAM = Program(seed=68317,
        tensors=[TensorInput(name='t0', dims=('A', 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 3, 'B': 2, 'C': 2}],
        body=['v0 = t0[1:]', 'v1 = torch.stack([t0, v0])'],
        returns=[])
CALLS = [Call(variant=1, values=2, state=0), Call(variant=2, values=3, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
