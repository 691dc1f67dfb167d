"""Fuzzer regression (seed 10802, cache='constant values'): refusal: UnsupportedError: x is returned after prims.copy_to_out_ consumed it; please file an issue"""


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
#     def fn(t0):  # first call: t0: float32 (A=2, B=2)
#         v0 = torch.nn.functional.normalize(t0, dim=0)
#         v2 = torch.gather(v0, -1, torch.zeros_like(v0, dtype=torch.long))
#         t0.copy_(v2)
#         return v2,
PROGRAM = Program(seed=10802,
        tensors=[TensorInput(name='t0', dims=('A', 'B'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = torch.nn.functional.normalize(t0, dim=0)',
              'v2 = torch.gather(v0, -1, torch.zeros_like(v0, dtype=torch.long))', 't0.copy_(v2)'],
        returns=['v2'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
