"""The prologue checks a module's parameters and buffers with one TensorGuards call (frontend/tensor_guards.py):
every change to one of them that made the check of that tensor fail still misses (and the report names the tensor),
what the check accepted is still accepted, and each call computes eager's result."""

import pytest
import torch

import thunder
from thunder.frontend.tensor_guards import TensorGuards

pytestmark = pytest.mark.skipif(TensorGuards is None, reason="this PyTorch has no TensorGuards")


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.register_buffer("scale", torch.full((4,), 2.0))

    def forward(self, x):
        return self.fc(x) * self.scale


def _rejected(jm):
    return thunder.examine.cache_report(jm).misses[-1].rejections[0]


def test_the_state_tensors_are_one_check_and_the_arguments_keep_their_own():
    jm = thunder.jit(Scaled())
    jm(torch.randn(3, 4))
    source = str(thunder.last_prologue_traces(jm)[-1])
    assert "tensors_guard.check(scale, fc_weight, fc_bias)" in source or \
        "tensors_guard.check(fc_weight, fc_bias, scale)" in source
    assert "x_guard.check(x)" in source  # an argument: checked where a miss reports it first


@pytest.mark.parametrize("change, path, expected, got", [
    (lambda m: m.fc.weight.requires_grad_(False), "self.fc.weight", "requires_grad True", "requires_grad False"),
    (lambda m: setattr(m, "scale", torch.full((3, 4), 0.5)), "self.scale", "shape (4,)", "shape (3, 4)"),
    (lambda m: m.scale.resize_(1), "self.scale", "shape (4,)", "shape (1,)"),
    (lambda m: setattr(m, "scale", torch.full((4,), 2, dtype=torch.float64)), "self.scale", "dtype torch.float32",
     "dtype torch.float64"),
])
def test_a_change_to_one_state_tensor_misses_and_is_named(change, path, expected, got):
    torch.manual_seed(0)
    model, x = Scaled(), torch.randn(3, 4)
    jm = thunder.jit(model)
    torch.testing.assert_close(jm(x), model(x))
    change(model)
    torch.testing.assert_close(jm(x), model(x))
    assert thunder.cache_misses(jm) == 2
    r = _rejected(jm)
    assert (r.check, r.path, r.expected, r.got) == ("check_tensors", path, expected, got)


def test_what_only_the_python_check_accepts_is_still_a_hit_with_the_new_values():
    # TensorGuards wants the exact class and dispatch keys; a tensor of another class with the same metadata fails
    # it, and the Python check of that tensor accepts it: a hit, computed with the tensor the module now holds
    class Marked(torch.Tensor):
        pass

    torch.manual_seed(0)
    model, x = Scaled(), torch.randn(3, 4)
    jm = thunder.jit(model)
    jm(x)
    model.scale = torch.full((4,), 3.0)  # a new tensor, the same metadata
    torch.testing.assert_close(jm(x), model(x))
    with torch.no_grad():
        model.fc.weight.mul_(2)  # new values in place
    torch.testing.assert_close(jm(x), model(x))
    model.scale = torch.full((4,), 5.0).as_subclass(Marked)
    assert not TensorGuards(torch.ones(4), dynamic_dims_sizes=[[4]], dynamic_dims_strides=[[None]]).check(model.scale)
    actual, expected = jm(x), model(x)
    torch.testing.assert_close(actual, expected.as_subclass(torch.Tensor))
    assert type(actual) is type(expected)  # eager's subclass, as the subclass input gives it
    assert (thunder.cache_hits(jm), thunder.cache_misses(jm)) == (3, 1)
