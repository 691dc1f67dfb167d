"""Fuzzer regression (seed 61682, cache='symbolic values'): crash: backward: RuntimeError: Function ThunderAutogradFunctionBackward returned an invalid gradient"""


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
#     def fn(t0, n0):  # first call: t0: float32 (B=5, A=5) requires_grad; n0 = 1
#         v5 = t0[:n0]
#         v6 = v5[v5.shape[0] - 1]
#         return v6,
PROGRAM = Program(seed=61682,
        tensors=[TensorInput(name='t0', dims=('B', 'A'), dtype='float32', requires_grad=True)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 5, 'B': 5, 'C': 4, 'n0': 1}, {'A': 5, 'B': 5, 'C': 4, 'n0': 4},
                  {'A': 2, 'B': 3, 'C': 2, 'n0': 4}],
        body=['v5 = t0[:n0]', 'v6 = v5[v5.shape[0] - 1]'],
        returns=['v6'])
CALLS = [Call(variant=0, values=1, state=0), Call(variant=1, values=2, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
