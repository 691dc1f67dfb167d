"""thunder.jit(optimizer.step): parameters and optimizer state equal to eager after several steps,
updated in place (same tensor objects, same storage)."""

import pytest
import torch

import thunder
from thunder.testing.optimizers import assert_steps_match_eager

CASES = [
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True)),
    (torch.optim.Adam, dict(lr=0.01)),
    (torch.optim.Adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    (torch.optim.AdamW, dict(lr=0.01)),
    (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
]


def _params(seed):
    # small tensors (the torch executor runs their updates in lockstep, by foreach calls) and one over 64 KiB (run
    # alone): both give eager's values bit for bit
    torch.manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(8, 4)), torch.nn.Parameter(torch.randn(4)),
            torch.nn.Parameter(torch.randn(2, 3, 5)), torch.nn.Parameter(torch.randn(100, 90))]


@pytest.mark.parametrize("foreach", [False, True], ids=["for-loop", "foreach"])
@pytest.mark.parametrize("opt_cls,options", CASES, ids=lambda x: x.__name__ if isinstance(x, type) else
                         "-".join(f"{k}={v}" for k, v in x.items()))
def test_optimizer_steps_match_eager_in_place(opt_cls, options, foreach):
    params, ref = _params(0), _params(0)
    opt, ref_opt = opt_cls(params, foreach=foreach, **options), opt_cls(ref, foreach=foreach, **options)
    step = thunder.jit(opt.step)
    torch.manual_seed(1)
    assert_steps_match_eager(step, opt, ref_opt, steps=5, rtol=0, atol=0)
    assert thunder.cache_misses(step) <= 2  # the first step creates the state; later ones reuse one program
