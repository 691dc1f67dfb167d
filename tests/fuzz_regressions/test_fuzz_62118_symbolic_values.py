"""Fuzzer regression (seed 62118, cache='symbolic values'): crash: UnboundLocalError: cannot access local variable 'iN' where it is not associated with a value"""


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
#     def fn(t0, n0):  # first call: t0: float64 (B=2, 1) requires_grad; n0 = 1
#         v0 = t0.chunk(2, 1)[-1]
#         v2 = t0.chunk(2, -1)[-1]
#         v3 = v2.roll(n0)
#         v4 = torch.mm(v0.t(), v3)
#         v6 = v4.expand(2, *v4.shape)
#         v8 = v6.to(torch.int64)
#         return v8,
PROGRAM = Program(seed=62118,
        tensors=[TensorInput(name='t0', dims=('B', 1), dtype='float64', requires_grad=True)],
        numbers=[NumberInput(name='n0', kind='int')],
        variants=[{'A': 2, 'B': 2, 'C': 2, 'n0': 1}, {'A': 2, 'B': 2, 'C': 2, 'n0': 1},
                  {'A': 2, 'B': 2, 'C': 2, 'n0': 1}],
        body=['v0 = t0.chunk(2, 1)[-1]', 'v2 = t0.chunk(2, -1)[-1]', 'v3 = v2.roll(n0)',
              'v4 = torch.mm(v0.t(), v3)', 'v6 = v4.expand(2, *v4.shape)', 'v8 = v6.to(torch.int64)'],
        returns=['v8'])
CALLS = [Call(variant=0, values=0, state=0)]


def test_matches_eager():
    outcome = run_program(PROGRAM, cache='symbolic values', executors=None, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
