"""Fuzzer regression (seed 77, cache='constant values'): mismatch: output[i]: value 'dtypes.floatN', eager 'torch.floatN'"""


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
#         v1 = t0.narrow(0, 0, 1)
#         v1.zero_()
#         v4 = v1.chunk(2, -2)[-1]
#         v5 = torch.cat([v4] * 3, 0)
#         v6 = f'{v5.dtype}'
#         return v6,
PROGRAM = Program(seed=77,
        tensors=[TensorInput(name='t0', dims=('A', 'A'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -0.71}, {'A': 2, 'B': 2, 'C': 2, 'f0': -1.65},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': -1.65}],
        body=['v1 = t0.narrow(0, 0, 1)\nv1.zero_()', 'v4 = v1.chunk(2, -2)[-1]',
              'v5 = torch.cat([v4] * 3, 0)', "v6 = f'{v5.dtype}'"],
        returns=['v6'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
