"""Optimizer steps in tests: a compiled ``optimizer.step`` checked against eager's."""

from __future__ import annotations

__all__ = ["assert_steps_match_eager"]


def assert_steps_match_eager(step, opt, ref_opt, *, steps: int, **tolerances) -> None:
    """Runs ``step`` (the compiled ``opt.step``) and eager ``ref_opt.step`` ``steps`` times on equal random
    gradients; the parameters and the optimizer state must equal eager's (``tolerances`` as for
    ``torch.testing.assert_close``) and be updated in place (same storage; the state's tensors, as eager's, from
    the second step on), and each step returns what eager's does."""
    import torch

    params = [p for group in opt.param_groups for p in group["params"]]
    refs = [p for group in ref_opt.param_groups for p in group["params"]]
    pointers = [p.data_ptr() for p in params]

    def state_pointers(o, ps):
        return [(key, v.data_ptr()) for p in ps for key, v in o.state[p].items() if isinstance(v, torch.Tensor)]

    for i in range(steps):
        for p, r in zip(params, refs):
            g = torch.randn_like(p)
            p.grad, r.grad = g.clone(), g.clone()
        before, ref_before = state_pointers(opt, params), state_pointers(ref_opt, refs)
        assert step() == ref_opt.step()
        if i:  # the first step creates the state; later ones update it where eager does
            eager_kept = [a == b for a, b in zip(ref_before, state_pointers(ref_opt, refs))]
            kept = [a == b for a, b in zip(before, state_pointers(opt, params))]
            assert kept == eager_kept, (before, state_pointers(opt, params))
    for p, r in zip(params, refs):
        torch.testing.assert_close(p, r, **tolerances)
        for key, value in ref_opt.state[r].items():
            torch.testing.assert_close(opt.state[p][key], value, msg=key, **tolerances)
    assert [p.data_ptr() for p in params] == pointers
