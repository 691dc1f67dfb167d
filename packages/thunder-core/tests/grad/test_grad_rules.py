"""Gradient rules on the cases random OpInfo samples rarely hit: ties, zeros, repeated indices, strides,
broadcasting, mixed dtypes, keepdim; and the fused rules of torch_rules.py (attention, embedding, losses,
normalizations) against eager autograd. Each test runs with the torch executor's rules (eager's backward
kernels, thunder/executors/torch_grad.py) and with the built-in rules alone."""

from __future__ import annotations

import math
import warnings

import pytest
import torch
import torch.nn.functional as F

import thunder


@pytest.fixture(autouse=True, params=["torch kernels", "built-in rules"])
def rules(request, monkeypatch):
    """Every test runs twice: with the torch executor's own rules (eager's backward kernels), and with them
    removed, so that the built-in rules a fusion executor gets (the decomposable backward) are checked too."""
    if request.param == "built-in rules":
        monkeypatch.setattr(thunder.extend.get_executor("torch"), "grad_rules", {})
    return request.param


def _leaves(args):
    return [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]


def check_grads(fn, *args, atol=1e-7, rtol=1e-7, cotangent=None, **kwargs):
    """``fn`` jitted and eager on the same inputs: same outputs, and the same gradients (random cotangents or
    ``cotangent``) of every input that requires grad; thunder's backward must have run. Returns the jitted fn."""
    jfn = thunder.jit(fn)
    expected = fn(*args, **kwargs)
    actual = jfn(*args, **kwargs)
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, equal_nan=True)
    assert actual.requires_grad == expected.requires_grad
    torch.manual_seed(0)
    cot = torch.randn_like(expected) if cotangent is None else cotangent
    leaves = _leaves(list(args) + list(kwargs.values()))
    eg = torch.autograd.grad(expected, leaves, cot, allow_unused=True)
    ag = torch.autograd.grad(actual, leaves, cot, allow_unused=True)
    assert thunder.last_backward_traces(jfn), "no thunder backward"
    for i, (a, e) in enumerate(zip(ag, eg)):
        e = torch.zeros_like(leaves[i]) if e is None else e
        a = torch.zeros_like(leaves[i]) if a is None else a
        assert a.dtype == e.dtype, (i, a.dtype, e.dtype)
        torch.testing.assert_close(a, e, atol=atol, rtol=rtol, equal_nan=True, msg=lambda m: f"gradient {i}: {m}")
    return jfn


def _symbols(jfn, backward=False):
    traces = thunder.last_backward_traces(jfn) if backward else thunder.last_traces(jfn)
    return {b.sym.id for b in traces[0].bound_symbols}


def t(*values, dtype=torch.float64, rg=True):
    return torch.tensor(values, dtype=dtype, requires_grad=rg)


# ---------------------------------------------------------------------------------------------
# Ties
# ---------------------------------------------------------------------------------------------


def test_maximum_minimum_ties_share_the_gradient():
    a, b = t(1.0, 2.0, 3.0, 3.0), t(1.0, 5.0, 0.0, 3.0)
    check_grads(torch.maximum, a, b)
    check_grads(torch.minimum, a, b)
    check_grads(lambda x: torch.maximum(x, torch.ones_like(x)), a)


@pytest.mark.parametrize("keepdim", [False, True])
def test_amax_amin_ties_are_distributed_evenly(keepdim):
    x = torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], dtype=torch.float64, requires_grad=True)
    check_grads(lambda a: torch.amax(a, 1, keepdim=keepdim), x)
    check_grads(lambda a: torch.amin(a, 0, keepdim=keepdim), x)
    check_grads(lambda a: torch.amax(a, (0, 1), keepdim=keepdim), x)


def test_max_min_full_reduction_ties_are_distributed_evenly():
    x = torch.tensor([[1.0, 3.0, 3.0], [2.0, 3.0, 2.0]], dtype=torch.float64, requires_grad=True)
    check_grads(torch.max, x)
    check_grads(torch.min, x)


def test_max_with_dim_sends_the_gradient_to_the_returned_index():
    # max(dim) picks one index among ties; its gradient goes there only (unlike amax)
    x = torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], dtype=torch.float64, requires_grad=True)
    check_grads(lambda a: torch.max(a, 1).values, x)
    check_grads(lambda a: torch.min(a, 1, keepdim=True).values, x)


@pytest.mark.parametrize("fn", [
    lambda x: torch.topk(x, 2, dim=-1).values,
    lambda x: x.topk(2, 0, largest=False)[0],
    lambda x: torch.topk(x, k=3, dim=1, sorted=False).values * 1.0,
    lambda x: torch.sort(x, 1, descending=True)[0],
    lambda x: x.sort(dim=0, stable=True).values,
    lambda x: torch.topk(x[0, 0], 1)[0],  # 0-d: the value itself
], ids=["topk", "method-dim0-smallest", "unsorted-kwargs", "sort", "method-stable", "0-d"])
def test_topk_and_sort_scatter_the_gradient_to_the_positions_picked(fn):
    # ties among the values: eager's kernel picks the indices, the rule scatters to the very ones it returned
    x = torch.tensor([[3.0, 1.0, 3.0, 2.0], [0.5, 0.5, -1.0, 4.0], [2.0, 2.0, 2.0, 2.0]], dtype=torch.float64,
                     requires_grad=True)
    jfn = check_grads(fn, x)
    # a grad rule, not PyTorch's autograd run inside the trace (grad/torch_island.py): no island in the backward
    assert not any("island" in s or "torch_autograd" in s for s in _symbols(jfn, backward=True) | _symbols(jfn))


def test_clamp_at_the_bounds_passes_the_gradient():
    x = t(-1.0, 0.0, 0.5, 1.0, 2.0)
    check_grads(lambda a: torch.clamp(a, 0.0, 1.0), x)
    check_grads(lambda a: torch.clamp(a, min=torch.zeros_like(a), max=torch.ones_like(a)), x)
    lo, hi = t(0.0, 0.0, 0.0, 0.0, 0.0), t(1.0, 1.0, 1.0, 1.0, 1.0)
    check_grads(lambda a, b, c: torch.clamp(a, b, c), x, lo, hi)


def test_relu_and_friends_at_zero():
    x = t(-1.0, 0.0, 2.0)
    check_grads(torch.relu, x)
    check_grads(torch.abs, x)
    check_grads(F.hardtanh, t(-1.0, 0.0, 1.0, 2.0))
    check_grads(lambda a: F.leaky_relu(a, 0.1), x)


# ---------------------------------------------------------------------------------------------
# pow and other singular points
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("exponent", [0.0, 1.0, 2.0, 0.5, -1.0, 3])
def test_pow_at_zero_scalar_exponent(exponent):
    check_grads(lambda a: torch.pow(a, exponent), t(0.0, 1.0, 2.0, -2.0 if float(exponent).is_integer() else 4.0))


def test_pow_at_zero_tensor_exponent():
    base = t(0.0, 0.0, 0.0, 2.0, 0.0)
    exp = t(0.0, 2.0, 0.5, 3.0, -1.0)
    check_grads(torch.pow, base, exp)
    check_grads(lambda e: torch.pow(0.0, e), t(0.0, 1.0, 2.0))
    check_grads(lambda e: torch.pow(2.0, e), t(0.0, 1.0, -2.0))


def test_sqrt_rsqrt_log_at_zero():
    check_grads(torch.sqrt, t(0.0, 4.0))
    check_grads(torch.log, t(0.0, 4.0))


def test_sigmoid_and_silu_at_extremes():
    # the decomposition 1 / (1 + exp(-x)) overflows exp; PyTorch's backward is g * y * (1 - y)
    x = t(-1000.0, -50.0, -1.0, 0.0, 1.0, 50.0, 1000.0)
    check_grads(lambda a: torch.sigmoid(a) * 3, x, atol=1e-12)
    check_grads(lambda a: torch.nn.functional.silu(a), x)


@pytest.mark.parametrize("weight", [0.25, "tensor"])
def test_lerp_under_an_infinite_cotangent(weight):
    # fuzz 560015: a division by zeros after lerp gives an infinite cotangent; PyTorch's backward is g * (1 - w)
    # for the start, the decomposition's g - w * g is inf - inf
    a, end = t(1.0, -2.0, 3.0), t(0.5, 0.5, 0.5)
    w = t(0.25, 0.5, 0.75) if weight == "tensor" else weight
    check_grads(lambda a, end, w: torch.lerp(a, end, w) / torch.zeros(3), a, end, w, cotangent=torch.ones(3))
    check_grads(lambda a, end, w: torch.lerp(a[:, None], end, w) * 2, a, end, w)  # broadcast back to each


@pytest.mark.parametrize("keepdim", [False, True])
def test_std_of_a_constant_has_zero_gradient(keepdim):
    # sqrt's derivative at 0 is infinite; PyTorch's std_backward gives 0 there
    x = torch.tensor([[3.0, 3.0, 3.0], [1.0, 2.0, 4.0]], dtype=torch.float64, requires_grad=True)
    check_grads(lambda a: torch.std(a, 1, keepdim=keepdim), x)
    check_grads(lambda a: torch.std(a[0]), x)
    check_grads(lambda a: torch.std_mean(a, 1, keepdim=keepdim)[0] + torch.std_mean(a, 1, keepdim=keepdim)[1], x)
    check_grads(lambda a: torch.std(a, (0, 1), correction=0), x)


def test_atan2_at_the_origin():
    check_grads(torch.atan2, t(0.0, 1e-200, 1.0, 0.0), t(0.0, 1e-200, 0.0, -1.0))


# ---------------------------------------------------------------------------------------------
# where, slices, gathers and scatters
# ---------------------------------------------------------------------------------------------


def test_where_tensor_and_scalar_branches():
    cond = torch.tensor([True, False, True])
    a, b = t(1.0, 2.0, 3.0), t(4.0, 5.0, 6.0)
    check_grads(lambda x, y: torch.where(cond, x, y), a, b)
    check_grads(lambda x: torch.where(cond, x, 0.0), a)
    check_grads(lambda y: torch.where(cond, 1.0, y), b)
    # broadcast branches
    check_grads(lambda x, y: torch.where(cond.reshape(3, 1), x, y), a, t(7.0))


@pytest.mark.parametrize("index", [slice(None, None, 2), slice(1, None, 3), slice(1, 6, 2), slice(-4, None, 2)])
def test_slices_with_steps(index):
    x = torch.randn(7, 5, dtype=torch.float64, requires_grad=True)
    check_grads(lambda a: a[index], x)
    check_grads(lambda a: a[:, index], x)
    check_grads(lambda a: a[index, 1::2], x)


def test_index_with_repeated_indices_accumulates():
    x = torch.randn(5, 3, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([0, 2, 0, 0, 4])
    check_grads(lambda a: a[idx], x)
    check_grads(lambda a: a[idx, torch.tensor([1, 1, 1, 0, 2])], x)
    check_grads(lambda a: torch.index_select(a, 0, idx), x)
    check_grads(lambda a: a[:, torch.tensor([2, 2])], x)


def test_gather_and_take_along_dim_with_repeated_and_negative_indices():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([[0, 0, 1], [3, 3, 3], [2, 0, 2]])
    check_grads(lambda a: torch.gather(a, 1, idx), x)
    check_grads(lambda a: torch.take_along_dim(a, torch.tensor([[-1, 0], [-4, -4], [1, -2]]), 1), x)


def test_scatter_add_and_index_add_with_repeated_indices():
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    src = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([[0, 0, 1], [3, 3, 3], [2, 0, 2]])
    check_grads(lambda x, s: torch.scatter_add(x, 1, idx, s), a, src)
    src2 = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    check_grads(lambda x, s: torch.index_add(x, 0, torch.tensor([1, 1, 0]), s, alpha=2.0), a, src2)
    check_grads(lambda x, s: torch.index_copy(x, 0, torch.tensor([2, 0, 1]), s), a, src2)


def test_scatter_with_repeated_indices():
    # eager: src's gradient is gathered at every index, also where a duplicate overwrote it
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    src = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([[0, 1, 2], [3, 0, 1], [2, 3, 0]])
    check_grads(lambda x, s: torch.scatter(x, 1, idx, s), a, src)
    check_grads(lambda x: torch.scatter(x, 1, idx, 2.0), a)


def test_index_put_accumulate_and_setitem():
    def f(a, v):
        b = a.clone()
        b[torch.tensor([0, 2])] = v
        return b

    check_grads(f, torch.randn(4, 3, dtype=torch.float64, requires_grad=True),
                torch.randn(3, dtype=torch.float64, requires_grad=True))
    check_grads(lambda a, v: torch.index_put(a, (torch.tensor([0, 0, 1]),), v, accumulate=True),
                torch.randn(4, 3, dtype=torch.float64, requires_grad=True),
                torch.randn(3, 3, dtype=torch.float64, requires_grad=True))


# ---------------------------------------------------------------------------------------------
# Broadcasting, type promotion, reductions
# ---------------------------------------------------------------------------------------------


def test_broadcasting_sums_gradients_back():
    a = torch.randn(4, 1, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(5, 1, dtype=torch.float64, requires_grad=True)
    c = torch.randn((), dtype=torch.float64, requires_grad=True)
    check_grads(lambda x, y, z: x * y + z, a, b, c)
    check_grads(lambda x, y: torch.atan2(x, y), a, b)
    check_grads(lambda x: x.expand(2, 4, 5, 3), a)


def test_type_promotion_gradients_keep_the_input_dtypes():
    x = torch.randn(4, 3, dtype=torch.float16, requires_grad=True)
    w = torch.randn(3, dtype=torch.float32, requires_grad=True)
    check_grads(lambda a, b: a * b, x, w, atol=1e-3, rtol=1e-3)
    check_grads(lambda a, b: (a + b).sum(0), x, w, atol=1e-3, rtol=1e-3)
    x64 = torch.randn(3, dtype=torch.float64, requires_grad=True)
    check_grads(lambda a, b: a * b, x64, w)
    check_grads(lambda a: a * 2 + torch.ones(3, dtype=torch.int64), w)


@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_with_keepdim(keepdim):
    x = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)
    check_grads(lambda a: torch.sum(a, (0, 2), keepdim=keepdim), x)
    check_grads(lambda a: torch.mean(a, 1, keepdim=keepdim), x)
    check_grads(lambda a: torch.var(a, 2, keepdim=keepdim), x)
    check_grads(lambda a: torch.std(a, (0, 1), keepdim=keepdim, correction=0), x)
    check_grads(lambda a: torch.prod(a, 1, keepdim=keepdim), x)
    check_grads(lambda a: torch.logsumexp(a, 1, keepdim=keepdim), x)
    check_grads(lambda a: torch.linalg.vector_norm(a, 2, (1,), keepdim=keepdim), x)


def test_prod_with_zeros():
    x = torch.tensor([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0], [1.0, 2.0, 3.0]], dtype=torch.float64, requires_grad=True)
    check_grads(lambda a: torch.prod(a, 1), x)
    check_grads(torch.prod, x)


def test_cumsum_and_flip():
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    jfn = check_grads(lambda a: torch.cumsum(a, 1), x)
    assert not any(s.startswith("torch_island.") for s in _symbols(jfn))
    check_grads(lambda a: torch.cumsum(a, 0, dtype=torch.float32), x, atol=1e-5, rtol=1e-5)


def test_diagonal_and_diagonal_scatter():
    x = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    check_grads(lambda a: torch.diagonal(a, 1), x)
    check_grads(lambda a: torch.diagonal(a, -2), x)
    src = torch.randn(4, dtype=torch.float64, requires_grad=True)
    check_grads(lambda a, s: torch.diagonal_scatter(a, s), x, src)


# ---------------------------------------------------------------------------------------------
# Fused rules
# ---------------------------------------------------------------------------------------------


def _no_island(jfn):
    assert not any(s.startswith("torch_island.") for s in _symbols(jfn))


@pytest.mark.parametrize("padding_idx", [None, 0, 2, -1])
def test_embedding_padding_idx_gets_no_gradient(padding_idx):
    w = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([[0, 2, 2], [5, 0, 1]])
    jfn = check_grads(lambda i, weight: F.embedding(i, weight, padding_idx=padding_idx), idx, w)
    _no_island(jfn)


def test_embedding_scale_grad_by_freq():
    w = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([[0, 2, 2], [5, 2, 1]])
    check_grads(lambda i, weight: F.embedding(i, weight, scale_grad_by_freq=True), idx, w)
    check_grads(lambda i, weight: F.embedding(i, weight, padding_idx=2, scale_grad_by_freq=True), idx, w)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_class_indices(reduction, label_smoothing, weighted):
    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    target = torch.tensor([0, 3, -100, 1, 3])
    w = torch.rand(4, dtype=torch.float64) + 0.5 if weighted else None
    jfn = check_grads(lambda a: F.cross_entropy(a, target, weight=w, reduction=reduction,
                                                label_smoothing=label_smoothing), x)
    _no_island(jfn)
    # other ignore_index, more dims (N, C, d)
    x3 = torch.randn(2, 4, 3, dtype=torch.float64, requires_grad=True)
    t3 = torch.tensor([[0, 1, 2], [3, 2, 2]])
    check_grads(lambda a: F.cross_entropy(a, t3, weight=w, ignore_index=2, reduction=reduction,
                                          label_smoothing=label_smoothing), x3)


def test_cross_entropy_probabilities_and_weight_gradient():
    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    p = torch.softmax(torch.randn(5, 4, dtype=torch.float64), 1).requires_grad_()
    check_grads(lambda a, b: F.cross_entropy(a, b, label_smoothing=0.1), x, p)
    check_grads(lambda a: F.nll_loss(torch.log_softmax(a, 1), torch.tensor([0, 1, 2, 3, 0])), x)


def test_cross_entropy_float32_matches_eager_closely():
    x = torch.randn(64, 1000, dtype=torch.float32, requires_grad=True) * 10
    x = x.detach().requires_grad_()
    target = torch.randint(0, 1000, (64,))
    check_grads(lambda a: F.cross_entropy(a, target), x, atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(dtype, affine):
    tol = {"atol": 1e-7, "rtol": 1e-7} if dtype is torch.float64 else {"atol": 1e-5, "rtol": 1e-5}
    x = torch.randn(4, 3, 8, dtype=dtype, requires_grad=True)
    w = torch.randn(3, 8, dtype=dtype, requires_grad=True) if affine else None
    b = torch.randn(3, 8, dtype=dtype, requires_grad=True) if affine else None
    jfn = check_grads(lambda a, weight, bias: F.layer_norm(a, (3, 8), weight, bias, 1e-5), x, w, b, **tol)
    _no_island(jfn)
    # the backward saves no normalized copy of the input: it recomputes the statistics
    check_grads(lambda a: F.layer_norm(a, (8,)), x, **tol)


def test_layer_norm_low_precision():
    x = torch.randn(4, 16, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(16, dtype=torch.bfloat16, requires_grad=True)
    b = torch.randn(16, dtype=torch.bfloat16, requires_grad=True)
    check_grads(lambda a, weight, bias: F.layer_norm(a, (16,), weight, bias), x, w, b, atol=2e-2, rtol=2e-2)


def test_norms_mixed_dtypes_bfloat16_input_float32_weight():
    # the gradients keep their arguments' dtypes (weight float32, input bfloat16), as eager's
    x = torch.randn(4, 16, dtype=torch.bfloat16, requires_grad=True)
    w = torch.randn(16, dtype=torch.float32, requires_grad=True)
    b = torch.randn(16, dtype=torch.float32, requires_grad=True)
    check_grads(lambda a, weight, bias: F.layer_norm(a, (16,), weight, bias), x, w, b, atol=2e-2, rtol=2e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager: no fused kernel for mixed dtypes
        check_grads(lambda a, weight: F.rms_norm(a, (16,), weight), x, w, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("eps", [None, 1e-6])
def test_rms_norm(dtype, eps):
    tol = {"atol": 1e-7, "rtol": 1e-7} if dtype is torch.float64 else {"atol": 1e-5, "rtol": 1e-5}
    x = torch.randn(4, 3, 8, dtype=dtype, requires_grad=True)
    w = torch.randn(8, dtype=dtype, requires_grad=True)
    jfn = check_grads(lambda a, weight: F.rms_norm(a, (8,), weight, eps), x, w, **tol)
    _no_island(jfn)
    check_grads(lambda a: F.rms_norm(a, (3, 8), eps=eps), x, **tol)


def _sdpa_inputs(b=2, h=4, hk=4, L=5, S=7, E=8, Ev=6, dtype=torch.float64):
    q = torch.randn(b, h, L, E, dtype=dtype, requires_grad=True)
    k = torch.randn(b, hk, S, E, dtype=dtype, requires_grad=True)
    v = torch.randn(b, hk, S, Ev, dtype=dtype, requires_grad=True)
    return q, k, v


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa(is_causal, scale):
    q, k, v = _sdpa_inputs()
    jfn = check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=is_causal, scale=scale), q, k, v)
    _no_island(jfn)
    fw = [b.sym.id for b in thunder.last_traces(jfn)[-1].bound_symbols]
    assert "torch.matmul" not in fw, fw  # the forward is one attention call


def test_sdpa_masks():
    q, k, v = _sdpa_inputs()
    bool_mask = torch.rand(5, 7) > 0.3
    bool_mask[:, 0] = True
    check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=bool_mask), q, k, v)
    float_mask = torch.randn(2, 1, 5, 7, dtype=torch.float64, requires_grad=True)
    check_grads(lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m), q, k, v, float_mask)
    check_grads(lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m, is_causal=False), q, k, v,
                float_mask.detach())


def test_sdpa_gqa_and_3d():
    q, k, v = _sdpa_inputs(h=6, hk=2)
    check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, enable_gqa=True, is_causal=True), q, k, v)
    q3, k3, v3 = (torch.randn(3, 5, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
    check_grads(F.scaled_dot_product_attention, q3, k3, v3)


def test_sdpa_float32_and_low_precision():
    q, k, v = _sdpa_inputs(dtype=torch.float32)
    check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), q, k, v, atol=1e-5, rtol=1e-4)
    q, k, v = _sdpa_inputs(dtype=torch.bfloat16)
    check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c), q, k, v, atol=3e-2, rtol=3e-2)


def test_sdpa_with_dropout_stays_correct():
    # dropout draws random numbers: PyTorch's own call runs it (same seed, same mask), under PyTorch's autograd
    q, k, v = _sdpa_inputs()
    fn = lambda a, b, c: F.scaled_dot_product_attention(a, b, c, dropout_p=0.5)  # noqa: E731
    jfn = thunder.jit(fn)
    torch.manual_seed(3)
    expected = fn(q, k, v)
    torch.manual_seed(3)
    actual = jfn(q, k, v)
    torch.testing.assert_close(actual, expected)
    cot = torch.randn_like(expected)
    for a, e in zip(torch.autograd.grad(actual, (q, k, v), cot), torch.autograd.grad(expected, (q, k, v), cot)):
        torch.testing.assert_close(a, e)


def test_softmax_rules_low_precision_and_dtype():
    x = torch.randn(4, 7, dtype=torch.float16, requires_grad=True)
    check_grads(lambda a: torch.softmax(a, -1), x, atol=1e-3, rtol=1e-3)
    check_grads(lambda a: torch.log_softmax(a, 0, dtype=torch.float32), x, atol=1e-3, rtol=1e-3)


def _sin_times_one(a):
    return torch.sin(a)


def test_executor_registered_grad_rule_is_used():
    """An executor's rule for a symbol it claims takes precedence over thunder's own (a fused backward)."""
    from thunder.core import prims
    from thunder.extend import OperatorExecutor

    ex = OperatorExecutor("grad_rule_test_ex")
    sin_op = ex.register_operator("grad_rule_test_sin", _sin_times_one, call_ctx=True)
    ex.register_implementation(prims.sin, sin_op)
    calls = []

    def rule(a):
        calls.append(a)
        return prims.sin(a), lambda g: (prims.mul(g, prims.cos(a)),)

    ex.register_grad_rule(prims.sin, rule)
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    jfn = thunder.jit(lambda a: torch.sin(a) * 2, executors=[ex, *thunder.get_default_executors()])
    y = jfn(x)
    (g,) = torch.autograd.grad(y, x, torch.ones_like(y))
    torch.testing.assert_close(g, 2 * torch.cos(x))
    assert calls, "the executor's rule was not used"


def test_sdpa_scale_math():
    # sanity of the helper shapes: a (L, S) = (1, 1) attention is the value itself
    q, k, v = (torch.randn(1, 1, 1, 4, dtype=torch.float64, requires_grad=True) for _ in range(3))
    check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, scale=1 / math.sqrt(4)), q, k, v)
