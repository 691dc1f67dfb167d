"""Fuzzer regression (seed 10152, cache='symbolic values'): crash: NameError: name 'iN' is not defined"""


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
#     def fn(t0):  # first call: t0: float32 (A=2, C=2)
#         v0 = t0.flatten()
#         LOG.append(v0.shape)
#         return None
PROGRAM = Program(seed=10152,
        tensors=[TensorInput(name='t0', dims=('A', 'C'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 2}, {'A': 2, 'B': 2, 'C': 2, 'n0': 6},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 6}],
        body=['v0 = t0.flatten()', 'LOG.append(v0.shape)'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
