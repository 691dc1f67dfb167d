"""Fuzzer regression (seed 19064, cache='constant values'): crash: RuntimeError: result type Long can't be cast to the desired output type Bool"""


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
#     def fn(t0):  # first call: t0: bool (A=2, C=2)
#         v0 = t0[-1]
#         v2 = v0 ** 2 + v0
#         v6 = v2[0]
#         v6.clamp_(max=0)
#         return None
PROGRAM = Program(seed=19064,
        tensors=[TensorInput(name='t0', dims=('A', 'C'), dtype='bool', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 6}, {'A': 2, 'B': 2, 'C': 2, 'n0': 5},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 5}],
        body=['v0 = t0[-1]', 'v2 = v0 ** 2 + v0', 'v6 = v2[0]\nv6.clamp_(max=0)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
