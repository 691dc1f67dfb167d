"""Module machinery that real models lean on: weak references to parameters (nn.LSTM), forward hooks
(transformers' output capture), and a third-party executor's kernel under autograd."""

import warnings

import torch
import torch.nn as nn

import thunder
from thunder.torch.opaque import OpaqueFallbackWarning


def _jit(module):
    jm = thunder.jit(module)

    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OpaqueFallbackWarning)
            return jm(*args)

    return jm, call


def test_lstm_weak_references_to_its_weights_see_the_parameters():
    # nn.LSTM.forward checks `ref() is not weight` for each flat weight; the dereferenced parameter is the same
    # proxy as the attribute, so the check passes as in eager and no weakref to a proxy is made
    torch.manual_seed(0)
    lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True)
    jm, call = _jit(lstm)
    x = torch.randn(3, 5, 4)
    (out, (h, c)), (expected, (eh, ec)) = call(x), lstm(x)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close((h, c), (eh, ec))
    out.sum().backward()
    grads = [p.grad.clone() for p in lstm.parameters()]
    lstm.zero_grad()
    expected.sum().backward()
    for g, p in zip(grads, lstm.parameters()):
        torch.testing.assert_close(g, p.grad)
    assert "lstm" in str(thunder.last_traces(jm)[-1])


def test_forward_hooks_run_inside_the_program():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
    model[0].register_forward_hook(lambda module, args, output: output * 2)
    jm, call = _jit(model)
    x = torch.randn(2, 4)
    torch.testing.assert_close(call(x), model(x))


def test_example_executor_sigmoid_keeps_gradients():
    # its kernel once updated tanh's output in place, which autograd had saved for the backward
    x = torch.randn(4, 3, requires_grad=True)
    jfn = thunder.jit(lambda x: torch.sigmoid(x) * x)
    jfn(x).sum().backward()
    grad = x.grad.clone()
    x.grad = None
    (torch.sigmoid(x) * x).sum().backward()
    torch.testing.assert_close(grad, x.grad)
