"""Fuzzer regression (seed 10114, cache='symbolic values'): crash: TypeError: unsupported operand type(s) for divmod(): 'IntegerProxy' and 'int'"""


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
#     def fn(t0):  # first call: t0: float32 (B=2, C=2, A=2, B=2)
#         v0 = divmod(t0.shape[-4], 2)[0]
#         return None
PROGRAM = Program(seed=10114,
        tensors=[TensorInput(name='t0', dims=('B', 'C', 'A', 'B'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -0.68}, {'A': 2, 'B': 2, 'C': 2, 'f0': 0.78},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.78}],
        body=['v0 = divmod(t0.shape[-4], 2)[0]'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
