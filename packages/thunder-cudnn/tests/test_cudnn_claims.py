"""What the cudnn executor takes, and the reason for each call it leaves to the next executor: the decision table on
tensors, and the traces of fake CUDA tensors (what a GPU run compiles: cuDNN's forward and backward calls, or the
fallback)."""

import pytest
import torch
import torch.nn.functional as F
from thunder_cudnn import support
from thunder_cudnn.availability import Runtime

from thunder.testing.fake_cuda import compile_traces, fake_cuda

H100_CUDNN_9_10 = Runtime(91002, (9, 0))
A100_CUDNN_9_0 = Runtime(90000, (8, 0))


def _qkv(b=2, hq=4, hk=4, lq=128, lk=128, d=64, dv=None, dtype=torch.bfloat16, device="cuda"):
    with fake_cuda():
        return (torch.empty(b, hq, lq, d, dtype=dtype, device=device), torch.empty(b, hk, lk, d, dtype=dtype,
                device=device), torch.empty(b, hk, lk, dv or d, dtype=dtype, device=device))


def _three_d():
    with fake_cuda():
        return tuple(torch.empty(4, 128, 64, dtype=torch.bfloat16, device="cuda") for _ in range(3))


def _mask(shape, dtype=torch.bool, requires_grad=False):
    with fake_cuda():
        return torch.empty(shape, dtype=dtype, device="cuda", requires_grad=requires_grad)


# (q, k, v), keyword arguments, runtime, backward -> None (taken) or words of the reason
CASES = {
    "causal bf16": (_qkv(), dict(is_causal=True), A100_CUDNN_9_0, True, None),
    "fp16 with a scale": (_qkv(dtype=torch.float16), dict(scale=0.3), A100_CUDNN_9_0, True, None),
    "GQA": (_qkv(hq=8, hk=2), dict(enable_gqa=True, is_causal=True), A100_CUDNN_9_0, True, None),
    "cross attention (lq != lk)": (_qkv(lq=64, lk=256), dict(), A100_CUDNN_9_0, True, None),
    "boolean mask": (_qkv(), dict(attn_mask=_mask((128, 128))), A100_CUDNN_9_0, True, None),
    "padding mask (B, 1, 1, L)": (_qkv(), dict(attn_mask=_mask((2, 1, 1, 128))), A100_CUDNN_9_0, True, None),
    "additive mask": (_qkv(), dict(attn_mask=_mask((2, 4, 128, 128), torch.bfloat16)), A100_CUDNN_9_0, True, None),
    "head dim 256 forward on H100": (_qkv(d=256), dict(), H100_CUDNN_9_10, False, None),
    "head dim 256 backward on H100, cuDNN 9.10": (_qkv(d=256), dict(), H100_CUDNN_9_10, True, None),
    "fp32": (_qkv(dtype=torch.float32), dict(), A100_CUDNN_9_0, False, "float16 or bfloat16 only"),
    "cpu": (_qkv(device="cpu"), dict(), A100_CUDNN_9_0, False, "CUDA tensors"),
    "3-D": (_three_d(), dict(), A100_CUDNN_9_0, False, "must be 4-D"),
    "head dim 72": (_qkv(d=72 + 4), dict(), A100_CUDNN_9_0, False, "multiples of 8"),
    "head dim 256 on A100": (_qkv(d=256), dict(), A100_CUDNN_9_0, False, "above 128"),
    "head dim 256 without a known device": (_qkv(d=256), dict(), Runtime(), False, "above 128"),
    "GQA without enable_gqa": (_qkv(hq=8, hk=2), dict(), A100_CUDNN_9_0, False, "without enable_gqa=True"),
    "mask and causal": (_qkv(), dict(attn_mask=_mask((128, 128)), is_causal=True), A100_CUDNN_9_0, False,
                        "both attn_mask and is_causal"),
    "float32 mask with bf16": (_qkv(), dict(attn_mask=_mask((128, 128), torch.float32)), A100_CUDNN_9_0, False,
                               "dtype dtypes.float32"),
    "mask requiring grad": (_qkv(), dict(attn_mask=_mask((128, 128), torch.bfloat16, True)), A100_CUDNN_9_0, True,
                            "requires grad"),
    "mask not broadcasting": (_qkv(), dict(attn_mask=_mask((3, 128, 128))), A100_CUDNN_9_0, False,
                              "does not broadcast"),
    "dropout": (_qkv(), dict(dropout_p=0.1), A100_CUDNN_9_0, False, "Philox"),
}


@pytest.mark.parametrize("name", CASES)
def test_decision(name):
    qkv, kwargs, rt, backward, words = CASES[name]
    reason = support.why_not(*qkv, **kwargs, backward=backward, runtime=rt)
    if words is None:
        assert reason is None, reason
    else:
        assert reason is not None and words in reason, reason


def _attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_forward_and_backward_trace_calls_cudnn(cudnn_claims):
    with fake_cuda():
        q, k, v = (t.requires_grad_() for t in _qkv())
        forward, backward = compile_traces(_attention, q, k, v, executors=[cudnn_claims])
    assert "thunder_cudnn.runtime.sdpa_forward_with_stats(q, k, v, None, True, None)" in str(forward), forward
    assert "thunder_cudnn.runtime.sdpa_backward(" in str(backward), backward
    assert "matmul" not in str(forward) + str(backward)


def test_inference_trace_calls_cudnn_without_statistics(cudnn_claims):
    forward, backward = compile_traces(_attention, *_qkv(), executors=[cudnn_claims])
    assert "thunder_cudnn.runtime.sdpa_forward(q, k, v, None, True, None)" in str(forward), forward
    assert backward is None


def test_refused_call_stays_with_the_torch_executor(cudnn_claims):
    forward, _ = compile_traces(_attention, *_qkv(dtype=torch.float32), executors=[cudnn_claims])
    assert "thunder_cudnn.runtime" not in str(forward) and "scaled_dot_product_attention" in str(forward), forward


def test_symbolic_sequence_length_keeps_one_trace(cudnn_claims):
    forward, _ = compile_traces(_attention, *_qkv(), executors=[cudnn_claims], cache="symbolic values")
    assert "thunder_cudnn.runtime.sdpa_forward(" in str(forward), forward
    assert "bf16[s" in str(forward) or "bf16[2, 4, s" in str(forward), forward  # the sizes stayed symbolic


def test_examine_reports_cudnns_reason(cudnn_claims):
    import thunder

    q = torch.randn(1, 2, 8, 16)
    jfn = thunder.jit(_attention, executors=["torch"])  # traced on CPU: cuDNN takes nothing
    jfn(q, q, q)
    (claim,) = [c for c in thunder.examine.claims(jfn, cudnn_claims) if "attention" in c.symbol]
    assert claim.reason == "cuDNN runs on CUDA tensors" and "test_cudnn_claims.py" in str(claim.source), claim
