"""Fuzzer regression (seed 99, cache='constant values'): refusal: UnsupportedError: an in-place update of the result of torch.nn.functional.normalize , which runs as an opaque PyTorch call: thunder cannot tell whether it is a """


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
#     def fn(t0):  # first call: t0: float32 (A=2, A=2, B=2)
#         v0 = torch.nn.functional.normalize(t0, dim=-1)
#         v0[-1] = v0[0]
#         return None
PROGRAM = Program(seed=99,
        tensors=[TensorInput(name='t0', dims=('A', 'A', 'B'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = torch.nn.functional.normalize(t0, dim=-1)', 'v0[-1] = v0[0]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
