"""Tensors made inside a grad-disabled region of the jitted function (``torch.no_grad()``, ``set_grad_enabled(False)``,
``torch.inference_mode()``) do not require grad, seen from inside the program (``y.requires_grad``) and from the
caller (the returned tensors), on the first and on cached calls, as in eager."""

import pytest
import torch

import thunder


def _flags(result):
    """What the caller can see of each returned tensor's autograd state, and the plain values."""
    out = []
    for r in result if isinstance(result, tuple) else (result,):
        if isinstance(r, torch.Tensor):
            out.append(("tensor", r.requires_grad, r.grad_fn is None, r.detach().tolist()))
        else:
            out.append(("value", r))
    return out


def _check(f, *args):
    jf = thunder.jit(f)
    for _ in range(2):
        assert _flags(jf(*args)) == _flags(f(*args))
    assert thunder.cache_hits(jf) == 1


def _no_grad_ctx(x):
    with torch.no_grad():
        y = x * 2
    z = x * 3
    return y, z, y.requires_grad, z.requires_grad


@torch.no_grad()
def _no_grad_decorated(x):
    y = x.exp()
    return y, y.requires_grad


def _set_grad_enabled_ctx(x):
    with torch.set_grad_enabled(False):
        y = x + 1
        v = y.view(-1)
    return y, v, x.sin(), y.requires_grad, v.requires_grad


def _set_grad_enabled_calls(x):
    torch.set_grad_enabled(False)
    y = x * 2
    torch.set_grad_enabled(True)
    return y, y.requires_grad, x * 2


def _inference_mode_ctx(x):
    with torch.inference_mode():
        y = x * 2
    return y, y.requires_grad, x * 2


@torch.inference_mode()
def _inference_mode_decorated(x):
    return x.cos(), torch.is_grad_enabled()


def _enable_grad_inside_no_grad(x):
    with torch.no_grad():
        y = x * 2
        with torch.enable_grad():
            z = x * 3
    return y, z, y.requires_grad, z.requires_grad


def _creation_ops_inside_no_grad(x):
    with torch.no_grad():
        base = torch.zeros(2) + torch.ones(2)
        scaled = x.detach() * 2
    return base, scaled, x * base, scaled.requires_grad


def _input_handed_back_keeps_its_flag(x):
    with torch.no_grad():
        same = x.float()  # a float tensor: x itself, as in eager
        view = x[0]
    return same.requires_grad, view.requires_grad, view


@pytest.mark.parametrize("f", [_no_grad_ctx, _no_grad_decorated, _set_grad_enabled_ctx, _set_grad_enabled_calls,
                               _inference_mode_ctx, _inference_mode_decorated, _enable_grad_inside_no_grad,
                               _creation_ops_inside_no_grad, _input_handed_back_keeps_its_flag],
                         ids=lambda f: f.__name__.strip("_"))
def test_grad_disabled_regions_like_eager(f):
    _check(f, torch.ones(2, requires_grad=True))


def test_module_parameters_under_no_grad():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)

        def forward(self, x):
            with torch.no_grad():
                w = self.lin.weight.t() * 1
                frozen = self.lin(x)
            return x @ w, frozen, self.lin(x), w.requires_grad, frozen.requires_grad

    m = M()
    jm = thunder.jit(m)
    x = torch.ones(2, 3)
    for _ in range(2):
        assert _flags(jm(x)) == _flags(m(x))


def test_called_under_no_grad_from_outside():
    def f(x):
        y = x * 2
        return y, y.requires_grad

    jf = thunder.jit(f)
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        assert _flags(jf(x)) == _flags(f(x))
    assert _flags(jf(x)) == _flags(f(x))


def _updated_under_no_grad(x):
    y = x * 2
    with torch.no_grad():
        y.add_(1)
    return y, y * 3


def _updated_through_data(x):
    y = x.sin()
    y.data.mul_(2)
    return y * x


def _updated_through_detach(x):
    y = x * 3
    y.detach()[0] = 7.0
    return y.cos()


def _detached_input_updated(x):
    y = x.detach()
    y.add_(1)
    return y, x * 2


def _updated_under_no_grad_after_a_scatter(x):
    y = torch.zeros(3)
    y.index_add_(0, torch.tensor([0, 1]), x[:2])  # y requires grad from here on (the scatter's meta must say so)
    with torch.no_grad():
        y.add_(1)
    return y * 3


def _updated_under_no_grad_after_other_scatters(x):
    y, z, w = torch.zeros(3), torch.ones(3), torch.zeros(3)
    y.index_copy_(0, torch.tensor([2, 0]), x[1:])
    z.scatter_add_(0, torch.tensor([1, 1]), x[:2])
    w.scatter_(0, torch.tensor([0, 2]), x[:2] * 2)
    with torch.no_grad():
        y.mul_(2)
        z.sub_(1)
        w.index_add_(0, torch.tensor([1]), torch.ones(1))
    return y + z * w


@pytest.mark.parametrize("f", [_updated_under_no_grad, _updated_through_data, _updated_through_detach,
                               _detached_input_updated, _updated_under_no_grad_after_a_scatter,
                               _updated_under_no_grad_after_other_scatters],
                         ids=lambda f: f.__name__.strip("_"))
def test_in_place_updates_without_grad_keep_the_graph_like_eager(f):
    """Eager keeps a tensor's autograd graph when it is updated under no_grad or through .data/detach():
    its new values flow forward, gradients flow back as if it had not changed."""
    x, xj = torch.linspace(0.5, 1.5, 3, requires_grad=True), torch.linspace(0.5, 1.5, 3, requires_grad=True)
    jf = thunder.jit(f)
    for _ in range(2):
        x.grad = xj.grad = None
        expected, got = f(x), jf(xj)
        assert _flags(got) == _flags(expected)
        out_e = [t for t in (expected if isinstance(expected, tuple) else (expected,)) if t.requires_grad]
        out_g = [t for t in (got if isinstance(got, tuple) else (got,)) if t.requires_grad]
        sum(t.sum() for t in out_e).backward()
        sum(t.sum() for t in out_g).backward()
        torch.testing.assert_close(xj.grad, x.grad)
        torch.testing.assert_close(xj.detach(), x.detach())


@pytest.mark.parametrize("requires_grad", [False, True])
def test_grad_mode_the_program_leaves_changed_stays_changed(requires_grad):
    def f(x):
        y = x * 2
        torch.set_grad_enabled(False)
        return y

    seen = []
    for fn in (f, thunder.jit(f)):
        torch.set_grad_enabled(True)
        try:
            x = torch.ones(2, requires_grad=requires_grad)
            first = fn(x)
            mode_after_first = torch.is_grad_enabled()
            second = fn(x)  # called with grad mode off now
            seen.append((mode_after_first, torch.is_grad_enabled(), first.requires_grad, second.requires_grad))
        finally:
            torch.set_grad_enabled(True)
    assert seen[0] == seen[1]
