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


SCHEDULES = {
    "SGD with StepLR": (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9),
                        lambda opt: torch.optim.lr_scheduler.StepLR(opt, 2, 0.5)),
    "AdamW with CosineAnnealingLR": (lambda ps: torch.optim.AdamW(ps, lr=0.01),
                                     lambda opt: torch.optim.lr_scheduler.CosineAnnealingLR(opt, 5)),
    "AdamW groups with LambdaLR": (
        lambda ps: torch.optim.AdamW([{"params": ps[:1], "lr": 0.01}, {"params": ps[1:], "weight_decay": 0.0}], lr=0.1),
        lambda opt: torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1 / (step + 1))),
    "SGD with a tensor lr and ExponentialLR": (lambda ps: torch.optim.SGD(ps, lr=torch.tensor(0.1)),
                                               lambda opt: torch.optim.lr_scheduler.ExponentialLR(opt, 0.9)),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_a_step_an_lr_scheduler_wraps_matches_eager(name):
    # a scheduler replaces optimizer.step by a wrapper reaching the optimizer through a weak reference and binding
    # SGD.step to it with func.__get__: both keep the optimizer's provenance, so its state is checked inputs
    make_opt, make_sched = SCHEDULES[name]
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    params = []
    for jit in (False, True):
        m = torch.nn.Linear(4, 3)
        m.load_state_dict(model.state_dict())
        opt = make_opt(list(m.parameters()))
        sched = make_sched(opt)
        step = thunder.jit(opt.step, cache="symbolic values") if jit else opt.step
        for s in range(5):
            opt.zero_grad()
            m(torch.randn(2, 4, generator=torch.Generator().manual_seed(s))).pow(2).sum().backward()
            step()
            sched.step()
        params.append([p.detach() for p in m.parameters()])
    torch.testing.assert_close(params[1], params[0])
    assert thunder.cache_misses(step) <= 2  # the first step, which creates the state, then every later one
