"""Fuzzer regression (seed 203523, cache='symbolic values'): crash: UnsupportedError: internal error: the continuation traced for a new value read from tensor data needs iN, which the segments before did not keep; please file an"""



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
#     def fn(t0):  # first call: t0: float32 (B=2, B=2, A=2, B=2)
#         v0 = t0[1:]
#         v0.mul_(2)
#         v1 = t0[None, 1:, ...]
#         v2 = v1.tolist()
#         v6 = torch.einsum('...i,...i->...', v1, v1)
#         return None
PROGRAM = Program(seed=203523,
        tensors=[TensorInput(name='t0', dims=('B', 'B', 'A', 'B'), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 3}, {'A': 2, 'B': 2, 'C': 2, 'n0': 2},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 2}],
        body=['v0 = t0[1:]\nv0.mul_(2)', 'v1 = t0[None, 1:, ...]', 'v2 = v1.tolist()',
              "v6 = torch.einsum('...i,...i->...', v1, v1)"],
        returns=[])
CALLS = [Call(variant=0, values=0, state=0), Call(variant=0, values=1, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
