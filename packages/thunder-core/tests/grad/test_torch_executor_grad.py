"""The torch executor's backward: the ATen kernels eager's autograd runs (thunder/executors/torch_grad.py).

Each composite is checked against eager (the very same kernels: gradients agree to float64 round-off, float32
closely) and the backward trace must name the kernel eager uses. Where eager would not use it (3-d attention,
label smoothing, mixed dtypes), the built-in rule applies. A fusion executor that claims a composite gets the
built-in (decomposable) rule, not the torch executor's kernel.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

import thunder
from thunder.extend import FusionExecutor
from thunder.transforms.autograd import split_forward_backward


def _calls(trace: str, kernel: str) -> bool:
    # the overload itself, or the torch executor's call laying its inputs out as eager's calling code does
    return f"torch.ops.aten.{kernel}.default(" in trace or f"torch_impls.{kernel.lstrip('_')}(" in trace


def check(fn, *args, kernels=(), absent=(), atol=1e-7, rtol=1e-7):
    """``fn`` jitted matches eager in outputs and gradients; its backward trace calls ``kernels`` and none of
    ``absent``. Returns the printed backward trace."""
    jfn = thunder.jit(fn)
    expected, actual = fn(*args), jfn(*args)
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol)
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    torch.manual_seed(0)
    cot = torch.randn_like(expected)
    eg = torch.autograd.grad(expected, leaves, cot)
    ag = torch.autograd.grad(actual, leaves, cot)
    for i, (a, e) in enumerate(zip(ag, eg)):
        assert a.dtype == e.dtype
        torch.testing.assert_close(a, e, atol=atol, rtol=rtol, msg=lambda m: f"gradient {i}: {m}")
    backward = str(thunder.last_backward_traces(jfn)[-1])
    for k in kernels:
        assert _calls(backward, k), f"no {k} in\n{backward}"
    for k in absent:
        assert not _calls(backward, k), f"{k} in\n{backward}"
    return backward


def _x(*shape, dtype=torch.float64):
    return torch.randn(*shape, dtype=dtype, requires_grad=True)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(dtype, affine):
    w, b = (_x(3, 8, dtype=dtype), _x(3, 8, dtype=dtype)) if affine else (None, None)
    tol = {} if dtype is torch.float64 else {"atol": 1e-5, "rtol": 1e-5}
    bw = check(lambda x, w, b: F.layer_norm(x, (3, 8), w, b), _x(4, 3, 8, dtype=dtype), w, b,
               kernels=("native_layer_norm_backward",), **tol)
    # mean and rstd are saved from the forward, as eager does: the backward recomputes no statistics
    assert "torch.var" not in bw and "torch.mean" not in bw


def test_layer_norm_bfloat16_and_mixed_dtypes():
    x, w, b = _x(4, 16, dtype=torch.bfloat16), _x(16, dtype=torch.bfloat16), _x(16, dtype=torch.bfloat16)
    check(lambda x, w, b: F.layer_norm(x, (16,), w, b), x, w, b, kernels=("native_layer_norm_backward",), atol=1e-2,
          rtol=1e-2)
    # a bfloat16 input with float32 weights: not eager's single kernel on CPU; the built-in rule
    w32, b32 = _x(16, dtype=torch.float32), _x(16, dtype=torch.float32)
    check(lambda x, w, b: F.layer_norm(x, (16,), w, b), x, w32, b32, absent=("native_layer_norm_backward",),
          atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("op, kernel", [(torch.softmax, "_softmax_backward_data"),
                                        (torch.log_softmax, "_log_softmax_backward_data")])
def test_softmax(op, kernel):
    check(lambda x: op(x, -1), _x(3, 5), kernels=(kernel,))
    check(lambda x: op(x, 0, dtype=torch.float64), _x(3, 5, dtype=torch.float32), kernels=(kernel,))


@pytest.mark.parametrize("fn, kernel", [(F.gelu, "gelu_backward"), (lambda x: F.gelu(x, approximate="tanh"),
                                                                    "gelu_backward"),
                                        (F.silu, "silu_backward"), (F.relu, "threshold_backward")])
def test_activations(fn, kernel):
    x = _x(4, 6)
    with torch.no_grad():
        x[0, :3] = 0.0  # relu at 0: eager's gradient there is 0
    check(fn, x, kernels=(kernel,))


@pytest.mark.parametrize("act, kernel", [(F.gelu, "gelu_backward"), (lambda x: F.gelu(x, approximate="tanh"),
                                                                     "gelu_backward"),
                                         (F.silu, "silu_backward"), (F.relu, "threshold_backward")])
def test_an_activations_backward_writes_over_the_dead_incoming_gradient(act, kernel):
    # the activation's incoming gradient is the second linear's fresh, dead result: its backward kernel writes into
    # that buffer (ATen's grad_input= variant) instead of allocating, bit for bit eager's gradients
    x, w1, w2 = _x(6, 4, dtype=torch.float32), _x(8, 4, dtype=torch.float32), _x(3, 8, dtype=torch.float32)
    with torch.no_grad():
        w1[0] = 0.0  # relu at 0 for a column: eager's gradient there is 0

    def f(x, w1, w2):
        return F.linear(act(F.linear(x, w1)), w2).sum()

    jf = thunder.jit(f)
    expected_out, actual_out = f(x, w1, w2), jf(x, w1, w2)
    torch.testing.assert_close(actual_out, expected_out)
    expected = torch.autograd.grad(expected_out, (x, w1, w2))
    actual = torch.autograd.grad(actual_out, (x, w1, w2))
    assert all(torch.equal(a, e) for a, e in zip(actual, expected))
    backward = str(thunder.last_backward_traces(jf)[-1])
    assert f"torch_impls.{kernel}_into(" in backward and f"aten.{kernel}." not in backward, backward
    call = next(line for line in backward.splitlines() if f"{kernel}_into(" in line)
    incoming = call.split("(", 1)[1].split(",", 1)[0]
    assert f"out={incoming})" in call, call


@pytest.mark.parametrize("a_shape, b_shape", [((2, 3, 4), (4, 5)), ((5, 2, 3, 4), (4, 5)), ((2, 3, 4), (4,)),
                                              ((3, 1, 4), (4, 2))])
@pytest.mark.parametrize("a_grad", [True, False])
def test_a_batch_times_a_matrix_is_differentiated_as_eagers_folded_mm(a_shape, b_shape, a_grad):
    # eager folds the batch of a into the rows of one mm (mv) when b requires grad: b's gradient is one mm of the
    # folded a and cotangent, bit for bit, not a batched product summed over the batch (another rounding, and a
    # [batch, k, n] temporary)
    g = torch.Generator().manual_seed(0)
    a = torch.randn(*a_shape, generator=g).requires_grad_(a_grad)
    b = torch.randn(*b_shape, generator=g, requires_grad=True)
    cot = torch.randn(*torch.matmul(a, b).shape, generator=g)
    jf = thunder.jit(torch.matmul)
    leaves = (a, b) if a_grad else (b,)
    expected_out, actual_out = torch.matmul(a, b), jf(a, b)
    torch.testing.assert_close(actual_out, expected_out)
    expected = torch.autograd.grad(expected_out, leaves, cot)
    actual = torch.autograd.grad(actual_out, leaves, cot)
    assert all(torch.equal(x, e) for x, e in zip(actual, expected, strict=True))
    backward = str(thunder.last_backward_traces(jf)[-1])
    assert "sum" not in backward, backward


@pytest.mark.parametrize("padding_idx", [None, 1, -1])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding(padding_idx, scale):
    idx = torch.tensor([[0, 1, 1], [5, 0, 3]])
    check(lambda w: F.embedding(idx, w, padding_idx=padding_idx, scale_grad_by_freq=scale), _x(6, 4),
          kernels=("embedding_dense_backward",))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy(reduction, weighted):
    target = torch.tensor([0, 3, -100, 1, 3])
    w = torch.rand(4, dtype=torch.float64) + 0.5 if weighted else None
    check(lambda x: F.cross_entropy(x, target, weight=w, reduction=reduction), _x(5, 4),
          kernels=("nll_loss_backward", "_log_softmax_backward_data"))
    check(lambda x: F.cross_entropy(x, torch.tensor(2), weight=w, reduction=reduction), _x(4),
          kernels=("nll_loss_backward",))
    # label smoothing and (N, C, d) inputs: the built-in rule
    check(lambda x: F.cross_entropy(x, target, weight=w, reduction=reduction, label_smoothing=0.1), _x(5, 4),
          absent=("nll_loss_backward",))
    check(lambda x: F.cross_entropy(x, torch.tensor([[0, 1], [3, 2]]), weight=w, reduction=reduction), _x(2, 4, 2),
          absent=("nll_loss_backward",))


SDPA_BACKWARD = "_scaled_dot_product_flash_attention_for_cpu_backward"


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa_is_eager_cpu_flash_kernel(is_causal, scale):
    q, k, v = _x(2, 4, 5, 8), _x(2, 4, 7, 8), _x(2, 4, 7, 8)
    bw = check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=scale), q, k, v,
               kernels=(SDPA_BACKWARD,))
    assert "torch.matmul" not in bw  # no recomputed attention weights


def test_sdpa_bool_mask_gqa_float32_bfloat16():
    q, k, v = _x(2, 4, 5, 8), _x(2, 4, 7, 8), _x(2, 4, 7, 8)
    mask = torch.rand(5, 7) > 0.3
    mask[:, 0] = True
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), q, k, v, kernels=(SDPA_BACKWARD,))
    q6, k2, v2 = _x(2, 6, 5, 8), _x(2, 2, 7, 8), _x(2, 2, 7, 8)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True), q6, k2, v2,
          kernels=(SDPA_BACKWARD,))
    q, k, v = (_x(2, 4, 16, 8, dtype=torch.float32) for _ in range(3))
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v, kernels=(SDPA_BACKWARD,),
          atol=1e-6, rtol=1e-5)
    q, k, v = (_x(2, 4, 16, 8, dtype=torch.bfloat16) for _ in range(3))
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), q, k, v, kernels=(SDPA_BACKWARD,), atol=1e-2,
          rtol=1e-2)


def test_sdpa_where_eager_takes_the_math_path():
    # 3-d inputs, a float mask (which may require grad), a value head size of its own: eager's math path
    q3, k3, v3 = _x(3, 5, 4), _x(3, 5, 4), _x(3, 5, 4)
    check(F.scaled_dot_product_attention, q3, k3, v3, absent=(SDPA_BACKWARD,))
    q, k, v = _x(2, 4, 5, 8), _x(2, 4, 7, 8), _x(2, 4, 7, 8)
    m = _x(2, 1, 5, 7)
    check(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), q, k, v, m, absent=(SDPA_BACKWARD,))
    check(F.scaled_dot_product_attention, q, k, _x(2, 4, 7, 6), absent=(SDPA_BACKWARD,))


def test_backward_kernels_are_called_as_overloads():
    # a packet (torch.ops.aten.<name>) looks its overload up on every call, again on each step of a training loop
    # and with cold caches (10-20 us a kernel); the torch executor calls the overload itself, as eager's autograd does
    import functools

    from thunder.executors.torch_grad import aten_symbols
    from thunder.executors.torchex import ex

    for name, sym in aten_symbols.items():
        op = ex.implmap[sym.id].symbol
        if op.module == "thunder.executors.torch_impls":  # a kernel given its inputs laid out as eager's code does
            continue
        assert op.module == "torch", op.module
        target = functools.reduce(getattr, op.name.split("."), torch)
        assert isinstance(target, torch._ops.OpOverload), f"{name}: {type(target).__name__}"
        assert target is getattr(torch.ops.aten, name).default
    conv = torch.nn.Conv2d(3, 4, 3)
    backward = check(conv, _x(2, 3, 6, 6, dtype=torch.float32), kernels=("convolution_backward",))
    assert "torch.ops.aten.convolution_backward(" not in backward


def test_split_backward_is_one_cat():
    bw = check(lambda x: [p * (i + 1) for i, p in enumerate(x.split([2, 3, 1], 1))][1].sum(1), _x(4, 6))
    assert bw.count("torch.cat(") == 1 and "torch.add(" not in bw, bw
    check(lambda x: torch.stack(x.chunk(3, 0)[::2]), _x(6, 2))


def test_no_recomputation_for_the_torch_executor():
    # gelu's output feeds the second linear: eager saves it; recomputing it in backward would be a kernel eager
    # never runs (only a fusion executor makes recomputation nearly free)
    w1, w2 = _x(8, 4), _x(3, 8)
    bw = check(lambda x, w1, w2: F.linear(F.gelu(F.linear(x, w1)), w2), _x(5, 4), w1, w2)
    assert "torch.nn.functional.gelu(" not in bw and "torch.erf(" not in bw, bw


class _ClaimsGelu(FusionExecutor):
    """A fusion executor claiming ltorch.gelu (its decomposition), nothing else."""

    def can_execute(self, bsym):
        return bsym.sym.id == "ltorch.gelu"


def test_a_fusion_executor_claiming_the_composite_gets_the_builtin_rule():
    x = _x(4, 6)
    jfn = thunder.jit(F.gelu)
    jfn(x)
    computation = thunder.last_traces(jfn)[0]
    torchex, pythonex = thunder.extend.get_executor("torch"), thunder.extend.get_executor("python")
    with_torch = split_forward_backward(computation, (pythonex, torchex))
    assert "gelu_backward" in str(with_torch.backward)
    with_fusion = split_forward_backward(computation, (_ClaimsGelu("claims_gelu"), pythonex, torchex))
    assert "gelu_backward" not in str(with_fusion.backward) and "erf" in str(with_fusion.backward)


def test_executor_grad_rule_checker():
    ex = thunder.extend.OperatorExecutor("checked", priority=0)
    ex.register_grad_rule("ltorch.gelu", lambda a, approximate="none": None, checker=lambda a, approximate="none":
                          approximate == "tanh")
    jfn = thunder.jit(lambda x: F.gelu(x, approximate="tanh"))
    jfn(_x(2))
    b = next(b for b in thunder.last_traces(jfn)[0].bound_symbols if b.sym.id == "ltorch.gelu")
    assert ex.grad_rule(b) is not None
    assert ex.grad_rule(b.replace(kwargs={"approximate": "none"})) is None


@pytest.mark.parametrize("op", [torch.rsqrt, torch.exp, torch.tanh, torch.sqrt])
def test_outputs_are_read_not_recomputed(op):
    # the derivative of these is written with the output: the torch executor reads it, saved, as eager does,
    # instead of running the op again in backward
    x = (torch.rand(4, 5, dtype=torch.float64) + 0.5).requires_grad_()
    bw = check(lambda x: op(x) * 3.0, x)
    assert f"torch.{op.__name__}(" not in bw, bw


# ---------------------------------------------------------------------------------------------
# Opaque calls: convolutions, pooling, group norm run their eager backward kernels, not PyTorch-autograd islands
# ---------------------------------------------------------------------------------------------


def _no_island(backward: str):
    assert "torch_island" not in backward, backward


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("config", [dict(), dict(stride=2, padding=1), dict(dilation=2, groups=2, padding=(2,) * 1)])
def test_convolution(n, config):
    config = {k: (v * n if isinstance(v, tuple) else v) for k, v in config.items()}
    conv = getattr(F, f"conv{n}d")
    x, w, b = _x(2, 4, *(7,) * n), _x(6, 4 // config.get("groups", 1), *(3,) * n), _x(6)
    _no_island(check(lambda x, w, b: conv(x, w, b, **config), x, w, b, kernels=("convolution_backward",)))
    _no_island(check(lambda x, w: conv(x, w, None, **config), x, w, kernels=("convolution_backward",)))


def test_convolution_input_without_grad_gets_none():
    x = torch.randn(2, 3, 8, 8, dtype=torch.float64)
    bw = check(lambda x, w, b: F.conv2d(x, w, b, padding=1), x, _x(4, 3, 3, 3), _x(4),
               kernels=("convolution_backward",))
    assert "(False, True, True)" in bw, bw  # as eager: no input gradient computed


def test_convolution_where_the_op_decides():
    # padding="same" and a batch-less input are resolved inside the op: PyTorch's autograd (an island)
    x, w = _x(2, 3, 8, 8), _x(4, 3, 3, 3)
    check(lambda x, w: F.conv2d(x, w, padding="same"), x, w, absent=("convolution_backward",))
    check(lambda x, w: F.conv2d(x, w), _x(3, 8, 8), w, absent=("convolution_backward",))


@pytest.mark.parametrize("config", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                    dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1))])
def test_max_pool2d(config):
    x = _x(2, 3, 9, 10)
    _no_island(check(lambda x: F.max_pool2d(x, **config), x, kernels=("max_pool2d_with_indices_backward",)))
    _no_island(check(lambda x: F.max_pool2d(x, **config), _x(3, 9, 10), kernels=("max_pool2d_with_indices_backward",)))
    # with the indices returned too: they are eager's
    jfn = thunder.jit(lambda x: F.max_pool2d(x, **config, return_indices=True))
    out, idx = jfn(x)
    expected, expected_idx = F.max_pool2d(x, **config, return_indices=True)
    torch.testing.assert_close(out, expected)
    assert torch.equal(idx, expected_idx)


@pytest.mark.parametrize("config", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                                                count_include_pad=False),
                                    dict(kernel_size=3, divisor_override=2)])
def test_avg_pool2d(config):
    _no_island(check(lambda x: F.avg_pool2d(x, **config), _x(2, 3, 9, 10), kernels=("avg_pool2d_backward",)))


@pytest.mark.parametrize("size", [1, (3, 2)])
def test_adaptive_avg_pool2d(size):
    _no_island(check(lambda x: F.adaptive_avg_pool2d(x, size), _x(2, 3, 9, 10),
                     kernels=("_adaptive_avg_pool2d_backward",)))


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(affine):
    w, b = (_x(6), _x(6)) if affine else (None, None)
    _no_island(check(lambda x, w, b: F.group_norm(x, 3, w, b), _x(4, 6, 5, 3), w, b,
                     kernels=("native_group_norm_backward",)))
    _no_island(check(lambda x, w, b: F.group_norm(x, 2, w, b, 1e-3), _x(4, 6), w, b,
                     kernels=("native_group_norm_backward",)))


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("running", [True, False])
def test_batch_norm_training(affine, running):
    w, b = (_x(3), _x(3)) if affine else (None, None)
    stats = [(torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)) if running else (None, None)
             for _ in range(2)]
    x = _x(4, 3, 5, 2)
    (em, ev), (tm, tv) = stats
    jfn = thunder.jit(lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, True, 0.2, 1e-4))
    expected, actual = F.batch_norm(x, em, ev, w, b, True, 0.2, 1e-4), jfn(x, tm, tv, w, b)
    torch.testing.assert_close(actual, expected)
    if running:  # the running statistics are updated as eager's, once
        torch.testing.assert_close(tm, em)
        torch.testing.assert_close(tv, ev)
    leaves = [t for t in (x, w, b) if t is not None]
    cot = torch.randn_like(expected)
    for a, e in zip(torch.autograd.grad(actual, leaves, cot), torch.autograd.grad(expected, leaves, cot)):
        torch.testing.assert_close(a, e)
    backward = str(thunder.last_backward_traces(jfn)[-1])
    assert "native_batch_norm_backward.default(" in backward
    _no_island(backward)


def test_batch_norm_module_trains_like_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU())
    copied = copy.deepcopy(model)
    jmodel = thunder.jit(copied)
    for _ in range(2):
        x = torch.randn(2, 3, 6, 6)
        expected, actual = model(x), jmodel(x)
        torch.testing.assert_close(actual, expected)
        expected.sum().backward()
        actual.sum().backward()
    for (name, p), q in zip(model.named_parameters(), copied.parameters()):
        torch.testing.assert_close(q.grad, p.grad, msg=name)
    for b, c in zip(model.buffers(), copied.buffers(), strict=True):  # running statistics, batches tracked
        torch.testing.assert_close(c, b)
