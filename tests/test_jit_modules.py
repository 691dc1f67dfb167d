"""thunder.jit on nn.Modules: an MLP and a GPT-style model against eager."""

import copy

import pytest
import torch
import torch.nn as nn

import thunder
from nanogpt import GPT, MLP, GPTConfig


def test_mlp_matches_eager_and_behaves_like_the_module():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
    jm = thunder.jit(model)
    x = torch.randn(4, 16)
    torch.testing.assert_close(jm(x), model(x))
    assert isinstance(jm, nn.Module)
    assert jm.state_dict().keys() == model.state_dict().keys()
    assert [p is q for p, q in zip(jm.parameters(), model.parameters())] == [True] * 4
    assert getattr(jm, "0") is model[0]  # attribute access reaches the original

    # Parameters are reached on every call, not copied at compile time.
    with torch.no_grad():
        model[0].weight.mul_(2)
    torch.testing.assert_close(jm(x), model(x))
    new_state = {k: torch.randn_like(v) for k, v in model.state_dict().items()}
    jm.load_state_dict(new_state)
    torch.testing.assert_close(jm(x), model(x))
    assert thunder.cache_misses(jm) == 1


def test_mlp_gelu_module():
    torch.manual_seed(0)
    m = MLP(8, 32)
    x = torch.randn(2, 5, 8)
    jm = thunder.jit(m)
    torch.testing.assert_close(jm(x), m(x))
    assert "torch.nn.functional.gelu(" in str(thunder.last_traces(jm)[-1])


def test_train_eval_selects_the_right_program():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.0))
    jm = thunder.jit(model)
    x = torch.randn(2, 4)
    jm.eval()
    assert not model.training
    torch.testing.assert_close(jm(x), model(x))
    jm.train()
    assert model.training
    torch.testing.assert_close(jm(x), model(x))  # p=0 dropout in training is the identity
    assert thunder.cache_misses(jm) == 2


def test_gradients_flow_through_the_torch_executor():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    jm = thunder.jit(model)
    x = torch.randn(3, 4)
    jm(x).sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad)


@pytest.mark.parametrize("n_layer", [1, 2])
def test_gpt_forward_matches_eager(n_layer):
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=n_layer)).eval()
    idx = torch.randint(0, model.config.vocab_size, (2, 16))
    jm = thunder.jit(model)
    with torch.no_grad():
        expected = model(idx)
        actual = jm(idx)
    torch.testing.assert_close(actual, expected)
    final = thunder.last_traces(jm)[-1]
    namespace = {}
    exec(compile(str(final), "<gpt trace>", "exec"), namespace)
    assert "scaled_dot_product_attention" in str(final)


def test_gpt_loss_matches_eager():
    torch.manual_seed(0)
    model = GPT(GPTConfig(n_layer=1)).eval()
    idx = torch.randint(0, 256, (2, 8))
    targets = torch.randint(0, 256, (2, 8))
    jm = thunder.jit(model)
    logits, loss = jm(idx, targets)
    elogits, eloss = model(idx, targets)
    torch.testing.assert_close(logits, elogits)
    torch.testing.assert_close(loss, eloss)


def test_module_attributes_read_by_the_program_are_checked():
    torch.manual_seed(0)
    ln = nn.LayerNorm(8, elementwise_affine=False)
    jm = thunder.jit(ln)
    x = torch.randn(2, 4, 8)
    torch.testing.assert_close(jm(x), ln(x))
    ln.eps = 0.5  # a number the program used: the next call must see it
    torch.testing.assert_close(jm(x), ln(x))
    ln.normalized_shape = (4, 8)  # a tuple the program used whole
    torch.testing.assert_close(jm(x), ln(x))
    assert thunder.cache_misses(jm) == 3


def test_replacing_a_submodule_or_function_attribute_retraces():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    jm = thunder.jit(model)
    x = torch.randn(2, 4)
    torch.testing.assert_close(jm(x), model(x))
    model[1] = nn.Tanh()  # same path, different type: a different program
    torch.testing.assert_close(jm(x), model(x))

    class WithFn(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = torch.relu

        def forward(self, x):
            return self.act(x)

    m = WithFn()
    jm2 = thunder.jit(m)
    torch.testing.assert_close(jm2(x), torch.relu(x))
    m.act = torch.sigmoid
    torch.testing.assert_close(jm2(x), torch.sigmoid(x))


class _RebindsItsBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(4))
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        self.total = self.total + y.detach().sum(0)  # Module.__setattr__ keeps it in _buffers
        return y * self.total


MODULES_THAT_SET_THEIR_OWN_STATE = {
    "rebinds_a_buffer": _RebindsItsBuffer,
    "spectral_norm": lambda: nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4)),  # power iteration buffers
    "weight_norm": lambda: nn.utils.parametrizations.weight_norm(nn.Linear(4, 4)),
}


@pytest.mark.parametrize("name", sorted(MODULES_THAT_SET_THEIR_OWN_STATE))
def test_a_module_setting_its_own_buffers_trains_like_eager(name):
    # `self.total = ...` went into _buffers while the prologue was built from the read of _buffers['total']: the
    # prologue checked the program's own new value and rejected the call (an internal error)
    torch.manual_seed(0)
    eager = MODULES_THAT_SET_THEIR_OWN_STATE[name]()
    jitted_module = copy.deepcopy(eager)
    jitted = thunder.jit(jitted_module)
    for step in range(3):
        x = torch.randn(2, 4)
        expected, actual = eager(x), jitted(x)
        torch.testing.assert_close(actual, expected)
        expected.sum().backward()
        actual.sum().backward()
        for (n, a), (_, e) in zip(jitted_module.named_parameters(), eager.named_parameters(), strict=True):
            torch.testing.assert_close(a.grad, e.grad, msg=f"step {step}: grad of {n}")
        for (n, a), (_, e) in zip(jitted_module.named_buffers(), eager.named_buffers(), strict=True):
            torch.testing.assert_close(a, e, msg=f"step {step}: buffer {n}")
    assert thunder.cache_hits(jitted) >= 1
