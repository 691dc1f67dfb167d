"""cuDNN attention on a GPU against eager PyTorch, forward and gradients, for every variant the executor claims
(causal, boolean, additive and padding masks, GQA, cross attention, a scale, float16 and bfloat16, head dims 64 and
128). Every test skips, with the executor's reason, where cuDNN cannot run: CI runs none of them; a GPU session runs
them (benchmarks/gpu_session.sh cudnn)."""

import pytest
import torch
import torch.nn.functional as F
from thunder_cudnn import runtime

import thunder

pytestmark = pytest.mark.usefixtures("cudnn_ex")


def _qkv(b=2, hq=4, hk=4, lq=128, lk=128, d=64, dtype=torch.bfloat16):
    g = torch.Generator(device="cuda").manual_seed(0)
    return [torch.randn(b, h, l, d, device="cuda", dtype=dtype, generator=g, requires_grad=True)
            for h, l in ((hq, lq), (hk, lk), (hk, lk))]


def _mask(shape, dtype=torch.bool):
    g = torch.Generator(device="cuda").manual_seed(1)
    if dtype is torch.bool:  # every query attends to at least its first key: no fully masked row
        m = torch.rand(shape, device="cuda", generator=g) > 0.3
        m[..., 0] = True
        return m
    return torch.randn(shape, device="cuda", generator=g).to(dtype)


VARIANTS = {
    "causal": (dict(), dict(is_causal=True)),
    "no mask": (dict(), dict()),
    "scale": (dict(), dict(scale=0.2, is_causal=True)),
    "boolean mask": (dict(), dict(attn_mask=lambda: _mask((128, 128)))),
    "padding mask": (dict(), dict(attn_mask=lambda: _mask((2, 1, 1, 128)))),
    "additive mask": (dict(), dict(attn_mask=lambda: _mask((2, 4, 128, 128), torch.bfloat16))),
    "GQA": (dict(hq=8, hk=2), dict(is_causal=True, enable_gqa=True)),
    "cross attention": (dict(lq=64, lk=256), dict()),
    "head dim 128": (dict(d=128), dict(is_causal=True)),
    "float16": (dict(dtype=torch.float16), dict(is_causal=True)),
}


@pytest.mark.parametrize("name", VARIANTS)
def test_forward_and_gradients_match_eager(name):
    shape_kwargs, call_kwargs = VARIANTS[name]
    call_kwargs = {k: v() if callable(v) else v for k, v in call_kwargs.items()}
    if "attn_mask" in call_kwargs and call_kwargs["attn_mask"].dtype is not torch.bool:
        call_kwargs["attn_mask"] = call_kwargs["attn_mask"].to(shape_kwargs.get("dtype", torch.bfloat16))
    q, k, v = _qkv(**shape_kwargs)
    q_ref, k_ref, v_ref = (t.detach().clone().requires_grad_() for t in (q, k, v))

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **call_kwargs)

    jfn = thunder.jit(attention, executors=["cudnn"])
    out, expected = jfn(q, k, v), attention(q_ref, k_ref, v_ref)
    assert "thunder_cudnn.runtime.sdpa_forward_with_stats" in str(thunder.last_traces(jfn)[-1])
    torch.testing.assert_close(out, expected, atol=2e-2, rtol=2e-2)
    g = torch.randn_like(out)
    out.backward(g)
    expected.backward(g)
    assert "thunder_cudnn.runtime.sdpa_backward" in str(thunder.last_backward_traces(jfn)[-1])
    for name_, a, e in (("q", q, q_ref), ("k", k, k_ref), ("v", v, v_ref)):
        torch.testing.assert_close(a.grad, e.grad, atol=3e-2, rtol=3e-2, msg=name_)


def test_inference_runs_the_forward_without_statistics():
    q, k, v = (t.detach() for t in _qkv())
    jfn = thunder.jit(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), executors=["cudnn"])
    torch.testing.assert_close(jfn(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True),
                               atol=2e-2, rtol=2e-2)
    assert "thunder_cudnn.runtime.sdpa_forward(" in str(thunder.last_traces(jfn)[-1])


def test_new_sequence_length_reuses_the_trace_and_builds_its_graph():
    jfn = thunder.jit(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), executors=["cudnn"],
                      cache="symbolic values")
    before = runtime.stats()["graphs"]
    for seq in (128, 256, 128):
        q, k, v = (t.detach() for t in _qkv(lq=seq, lk=seq))
        torch.testing.assert_close(jfn(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True),
                                   atol=2e-2, rtol=2e-2)
    assert thunder.cache_misses(jfn) == 1
    assert runtime.stats()["graphs"] - before <= 2  # one graph per length; the third call finds it


def test_refused_variant_runs_eagers_kernel():
    q, k, v = _qkv(dtype=torch.float32)
    jfn = thunder.jit(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), executors=["cudnn"])
    torch.testing.assert_close(jfn(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert "thunder_cudnn" not in str(thunder.last_traces(jfn)[-1])
