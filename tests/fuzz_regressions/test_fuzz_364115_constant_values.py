"""Fuzzer regression (seed 364115, cache="constant values"): a temporary made with grad mode on, reused as the out=
buffer of a result made under no_grad, carried requires_grad (and out= then refused it)."""


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
#     def fn(t0):  # first call: t0: float32 () requires_grad
#         with torch.no_grad():
#             v0 = t0 * 2
#         v3 = t0 - t0
#         with torch.no_grad():
#             v9 = v3 * 2
#         v11 = v0 ** 2 + v9
#         return v11,
PROGRAM = Program(seed=364115,
        tensors=[TensorInput(name='t0', dims=(), dtype='float32', requires_grad=True)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'f0': -0.57, 'n0': 6},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.91, 'n0': 6},
                  {'A': 2, 'B': 2, 'C': 2, 'f0': 0.91, 'n0': 6}],
        body=['with torch.no_grad():\n    v0 = t0 * 2', 'v3 = t0 - t0',
              'with torch.no_grad():\n    v9 = v3 * 2', 'v11 = v0 ** 2 + v9'],
        returns=['v11'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='constant values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
