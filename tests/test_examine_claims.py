"""thunder.examine.claims: which operations an executor took, and its reason for the others (forward and backward)."""

import torch

import thunder


def test_claims_report_the_checkers_decision_per_operation():
    def f(x, n):
        return torch.sigmoid(x) + torch.sigmoid(n).sum()

    jfn = thunder.jit(f, executors=["example"])
    x = torch.randn(4, requires_grad=True)
    jfn(x, torch.arange(4)).sum().backward()
    found = thunder.examine.claims(jfn, "example")
    sigmoids = [c for c in found if c.symbol == "ltorch.sigmoid"]
    # the example executor's checker takes floating tensors only: the integer tensor's sigmoid goes elsewhere
    assert [c.reason for c in sigmoids] == [None, "example's checker refuses these arguments"], found
    assert "test_examine_claims.py" in str(sigmoids[0].source)
    assert any(c.reason == "example has no implementation of ltorch.add" for c in found)
    # the backward trace's operations (sigmoid's gradient: (1 - y) * y * g) are reported too
    assert [c.symbol for c in found[-3:]] == ["ltorch.sub", "ltorch.mul", "ltorch.mul"], found
