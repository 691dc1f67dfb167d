"""Fuzzer regression (seed 85, cache='symbolic values'): crash: TypeError: linspace() received an invalid combination of arguments - got (int, int, IntegerProxy), but expected one of: * (Tensor start, Tensor end, int steps, """


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
#         return None
PROGRAM = Program(seed=85,
        tensors=[TensorInput(name='t0', dims=('A',), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = torch.linspace(0, 1, t0.shape[-1])'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
