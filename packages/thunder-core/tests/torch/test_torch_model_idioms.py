"""Idioms of real model code (transformers, nn.TransformerEncoderLayer) that thunder.jit must run like eager."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import thunder
from thunder.core import dtypes
from thunder.torch.opaque import OpaqueFallbackWarning, may_return_view


def _jit(fn, *args, **kwargs):
    jfn = thunder.jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpaqueFallbackWarning)
        return jfn(*args, **kwargs), jfn


def test_cat_skips_legacy_empty_tensors():
    # transformers' DynamicCache starts from torch.tensor([]) and concatenates 4-D keys onto it along dim=-2
    def grow(keys):
        cache = torch.tensor([], dtype=torch.float64)
        return torch.cat([cache, keys], dim=-2), torch.cat([cache, cache])

    keys = torch.randn(2, 3, 4, 5)
    (out, empty), _ = _jit(grow, keys)
    expected_out, expected_empty = grow(keys)
    torch.testing.assert_close(out, expected_out)  # float64: the empty tensor takes part in type promotion
    assert empty.shape == expected_empty.shape == (0,)


def test_cat_still_checks_dims_of_the_other_tensors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        _jit(lambda a: torch.cat([torch.tensor([]), a], dim=5), torch.randn(2, 3))


def test_dtypes_equal_their_torch_counterparts():
    assert dtypes.float32 == torch.float32 and torch.float32 == dtypes.float32
    assert dtypes.bool8 != torch.float32 and not (dtypes.bool8 != torch.bool)
    assert {torch.float16: "half"}[dtypes.float16] == "half"
    assert dtypes.float32 != dtypes.float64 and dtypes.to_dtype(torch.int64) is dtypes.int64


def test_dtype_comparisons_in_user_code_take_eagers_branch():
    # torch.nn.functional._canonical_mask: `mask.dtype != torch.bool and not torch.is_floating_point(mask)` raises
    def branches(x, mask):
        scale = 2.0 if x.dtype == torch.float32 else 3.0
        if mask.dtype != torch.bool:
            raise AssertionError("only bool masks")
        return x.masked_fill(mask, torch.finfo(x.dtype).min) * scale + torch.iinfo(torch.int8).max

    x, mask = torch.randn(3, 4), torch.rand(3, 4) > 0.5
    out, _ = _jit(branches, x, mask)
    torch.testing.assert_close(out, branches(x, mask))


def test_attention_dropout_runs_as_pytorchs_call_with_eagers_mask():
    q, k, v = torch.randn(3, 2, 4, 6, 8).unbind(0)

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True)

    torch.manual_seed(7)
    out, jfn = _jit(attention, q, k, v)
    after_jit = torch.get_rng_state()
    torch.manual_seed(7)
    torch.testing.assert_close(out, attention(q, k, v))
    assert torch.equal(after_jit, torch.get_rng_state())
    assert "scaled_dot_product_attention_dropout" in str(thunder.last_traces(jfn)[0])
    # without dropout it stays the torch-language decomposition
    _, jfn = _jit(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.0), q, k, v)
    assert "scaled_dot_product_attention_dropout" not in str(thunder.last_traces(jfn)[0])


def test_in_place_update_of_an_opaque_result_that_is_not_a_view():
    # Mixtral's router: router_top_value /= router_top_value.sum(dim=-1, keepdim=True), on torch.topk's values
    def route(logits):
        values, indices = torch.topk(logits.softmax(-1), 2, dim=-1)
        values /= values.sum(dim=-1, keepdim=True)
        return values, indices

    logits = torch.randn(5, 4)
    (values, indices), _ = _jit(route, logits)
    expected_values, expected_indices = route(logits)
    torch.testing.assert_close(values, expected_values)
    assert torch.equal(indices, expected_indices)
    assert not may_return_view(torch.topk) and may_return_view(torch.Tensor.unfold)


def test_opaque_call_returning_none_among_tensors():
    # multi_head_attention_forward returns (output, None) when need_weights=False
    mha = torch.nn.MultiheadAttention(8, 2)
    x = torch.randn(5, 2, 8)
    out, jfn = _jit(lambda x: mha(x, x, x, need_weights=False), x)
    expected = mha(x, x, x, need_weights=False)
    torch.testing.assert_close(out[0], expected[0])
    assert out[1] is None
