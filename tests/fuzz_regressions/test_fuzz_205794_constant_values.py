"""Fuzzer regression (seed 205794, cache='constant values'): mismatch: exception message of RuntimeError: Expected size for first two dimensions of batchN tensor to be: [N] but got: [N]., eager: matN and matN shapes cannot be multi"""



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
#     def fn(t0, t1):  # first call: t0: bool (C=2, A=2, 1); t1: float32 (A=2, 1) requires_grad
#         v1 = t1 ** 2 + t0
#         v2 = v1.movedim(-3, 0)
#         v4 = v2[1:-1:2]
#         v7 = t1 @ v4
#         return None
PROGRAM = Program(seed=205794,
        tensors=[TensorInput(name='t0', dims=('C', 'A', 1), dtype='bool', requires_grad=False),
                 TensorInput(name='t1', dims=('A', 1), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 2}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v1 = t1 ** 2 + t0', 'v2 = v1.movedim(-3, 0)', 'v4 = v2[1:-1:2]', 'v7 = t1 @ v4'],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
