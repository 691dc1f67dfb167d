"""On CUDA the torch executor runs attention's backward as eager does: the memory-efficient kernel's forward (which
keeps its softmax statistics) and its backward kernel, not thunder's decomposed backward. The trace tests run on
fake CUDA tensors (no GPU needed); the numerical test needs a GPU."""

import pytest
import torch

import thunder
from thunder.testing.fake_cuda import compile_traces, fake_cuda


def _attention(q, k, v, **kwargs):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs).sum()


def _calls(trace) -> list[str]:
    return [b.sym.name for b in trace.bound_symbols]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("is_causal", [False, True])
def test_cuda_attention_uses_the_efficient_kernels_both_ways(dtype, is_causal):
    with fake_cuda():
        q, k, v = (torch.empty(2, 4, 16, 32, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
        forward, backward = compile_traces(lambda q, k, v: _attention(q, k, v, is_causal=is_causal), q, k, v,
                                           executors=["torch"])
    assert "ops.aten._scaled_dot_product_efficient_attention.default" in _calls(forward)
    assert "ops.aten._scaled_dot_product_efficient_attention_backward.default" in _calls(backward)


@pytest.mark.parametrize("case", ["mask", "grouped heads", "odd head size", "dropout-free fp64"])
def test_cuda_attention_outside_the_kernels_reach_keeps_thunders_rule(case):
    with fake_cuda():
        shape = (2, 4, 16, 30 if case == "odd head size" else 32)
        dtype = torch.float64 if case == "dropout-free fp64" else torch.float32
        q = torch.empty(shape, device="cuda", dtype=dtype, requires_grad=True)
        kv_shape = (2, 2, 16, shape[-1]) if case == "grouped heads" else shape
        k, v = (torch.empty(kv_shape, device="cuda", dtype=dtype, requires_grad=True) for _ in range(2))
        kwargs = {"enable_gqa": True} if case == "grouped heads" else {}
        if case == "mask":
            kwargs["attn_mask"] = torch.empty(16, 16, device="cuda", dtype=torch.bool)
        forward, backward = compile_traces(lambda q, k, v: _attention(q, k, v, **kwargs), q, k, v, executors=["torch"])
    assert not any("efficient_attention" in name for name in _calls(forward) + _calls(backward))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (the kernels run only there)")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cuda_attention_gradients_match_eager(dtype):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 64, 32, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
    jf = thunder.jit(lambda q, k, v: _attention(q, k, v, is_causal=True))
    out = jf(q, k, v)
    grads = torch.autograd.grad(out, (q, k, v))
    expected = _attention(q, k, v, is_causal=True)
    expected_grads = torch.autograd.grad(expected, (q, k, v))
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype is torch.bfloat16 else {"atol": 1e-4, "rtol": 1e-4}
    torch.testing.assert_close(out, expected, **tol)
    for g, e in zip(grads, expected_grads):
        torch.testing.assert_close(g, e, **tol)
    backward = str(thunder.last_backward_traces(jf)[-1])
    assert "_scaled_dot_product_efficient_attention_backward" in backward
