"""Fuzzer regression (seed 16385, cache='constant values'): crash: IndexError: amax(): Expected reduction dim N to have non-zero size."""


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
#     def fn(t2):  # first call: t2: float32 ()
#         v4 = t2 * G
#         v5 = v4.view(-1)
#         v6 = v5[1:]
#         v6.mul_(2)
#         v8 = torch.softmax(v6, -1)
#         return None
PROGRAM = Program(seed=16385,
        tensors=[TensorInput(name='t2', dims=(), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v4 = t2 * G', 'v5 = v4.view(-1)', 'v6 = v5[1:]\nv6.mul_(2)', 'v8 = torch.softmax(v6, -1)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
