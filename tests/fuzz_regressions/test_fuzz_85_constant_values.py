"""Fuzzer regression (seed 85, cache='constant values'): crash: UnsupportedError: the jitted function returned a tensor that is not an input and was not computed from inputs (created outside thunder's view, e.g. by an unsupp"""


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
#     def fn(t0):  # first call: t0: float32 (A=2)
#         v0 = torch.linspace(0, 1, t0.shape[-1])
#         v1 = v0.expand(2, *v0.shape)
#         v2 = v1 <= v1
#         return v2,
PROGRAM = Program(seed=85,
        tensors=[TensorInput(name='t0', dims=('A',), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = torch.linspace(0, 1, t0.shape[-1])', 'v1 = v0.expand(2, *v0.shape)', 'v2 = v1 <= v1'],
        returns=['v2'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
