"""Fuzzer regression (seed 201424, cache='symbolic values'): crash: UnsupportedError: internal error: the continuation traced for a new value read from tensor data needs iN, which the segments before did not keep; please file an"""



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
#     def fn(t0):  # first call: t0: float32 (B=2)
#         v0 = torch.cat((t0, t0.to(t0.dtype)))
#         v1 = torch.cat([t0, t0], dim=0)
#         v3 = v1.tolist()
#         v5 = v1.view(v1.shape)
#         v10 = torch.sqrt(torch.abs(v5))
#         return v10,
PROGRAM = Program(seed=201424,
        tensors=[TensorInput(name='t0', dims=('B',), dtype='float32', requires_grad=False)],
        numbers=[],
        variants=[{'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}, {'A': 2, 'B': 2, 'C': 2}],
        body=['v0 = torch.cat((t0, t0.to(t0.dtype)))', 'v1 = torch.cat([t0, t0], dim=0)', 'v3 = v1.tolist()',
              'v5 = v1.view(v1.shape)', 'v10 = torch.sqrt(torch.abs(v5))'],
        returns=['v10'])
CALLS = [Call(variant=0, values=0, state=0), Call(variant=0, values=1, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
