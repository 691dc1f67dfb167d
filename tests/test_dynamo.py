"""torch.compile(fn, backend="thunder"): Dynamo's graphs compiled by thunder.jit."""

import torch
import torch.nn as nn

from thunder.dynamo import ThunderCompiler


def test_backend_name_is_registered_and_matches_eager():
    def f(a, b):
        return (a * b + a).sin().sum(-1)

    torch._dynamo.reset()
    cf = torch.compile(f, backend="thunder")
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    torch.testing.assert_close(cf(a, b), f(a, b))


def test_module_and_graph_break():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))

    def g(x):
        y = m(x)
        torch._dynamo.graph_break()
        return y.softmax(-1)

    torch._dynamo.reset()
    cg = torch.compile(g, backend=ThunderCompiler(executors=["torch"]))
    x = torch.randn(3, 4)
    torch.testing.assert_close(cg(x), g(x))
