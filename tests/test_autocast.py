"""torch.autocast around and inside jitted functions: eager's dtypes and values, forward and backward.

Autocast becomes explicit casts in the trace (thunder/torch/autocast.py); each test runs the same program
eagerly and jitted on the same inputs and compares output dtypes and values, and the gradients' dtypes and
values (bf16/fp16 tolerances).
"""

import contextlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import thunder
from thunder.core.errors import UnsupportedError

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (autocast('cuda'))")
LOW = {torch.bfloat16: dict(atol=2e-2, rtol=2e-2), torch.float16: dict(atol=2e-3, rtol=2e-3)}


def _leaves(args):
    return [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]


def _clone(args):
    return [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _compare(fn, args, *, jfn=None, ctx=contextlib.nullcontext, low=torch.bfloat16, params=()):
    """Runs ``fn`` eagerly and jitted under ``ctx()`` and checks outputs and gradients (of the arguments and
    of ``params``, the parameters of a module) for equal dtypes and close values."""
    tol = LOW[low]
    jfn = jfn or thunder.jit(fn)
    eager_args, jit_args = _clone(args), _clone(args)
    with ctx():
        expected = _flat(fn(*eager_args))
    with ctx():
        actual = _flat(jfn(*jit_args))
    assert [a.dtype for a in actual] == [e.dtype for e in expected]
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, **tol)
    if not _leaves(args) and not params:
        return actual
    # gradients: a fixed cotangent per floating output, backward outside autocast (as recommended)
    torch.manual_seed(1)
    cots = [torch.randn_like(e, dtype=torch.float32) if e.is_floating_point() else None for e in expected]

    def backward(outs):
        return sum((o.float() * c).sum() for o, c in zip(outs, cots) if c is not None and o.requires_grad)

    grads_of = list(params)
    expected_grads = torch.autograd.grad(backward(expected), _leaves(eager_args) + grads_of, allow_unused=True)
    actual_grads = torch.autograd.grad(backward(actual), _leaves(jit_args) + grads_of, allow_unused=True)
    for a, e in zip(actual_grads, expected_grads):
        assert (a is None) == (e is None)
        if e is not None:
            assert a.dtype == e.dtype
            torch.testing.assert_close(a, e, **tol)
    return actual


def _autocast(device="cpu", dtype=torch.bfloat16, **kw):
    return lambda: torch.autocast(device, dtype=dtype, **kw)


def _inputs(*shapes, requires_grad=True, dtype=torch.float32, device="cpu"):
    torch.manual_seed(0)
    return [torch.randn(*s, dtype=dtype, device=device, requires_grad=requires_grad) for s in shapes]


# ----- autocast around the jitted call ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_linear_around(dtype):
    out = _compare(lambda x, w, b: F.linear(x, w, b), _inputs((4, 8), (16, 8), (16,)), ctx=_autocast(dtype=dtype),
                   low=dtype)
    assert out[0].dtype is dtype


def test_matmul_and_operator_around():
    def f(a, b, c):
        return a @ b, torch.matmul(a, c.t()), torch.bmm(a.unsqueeze(0), b.unsqueeze(0))

    out = _compare(f, _inputs((4, 8), (8, 6), (5, 8)), ctx=_autocast())
    assert {o.dtype for o in out} == {torch.bfloat16}


def test_casts_are_explicit_trace_ops():
    jf = thunder.jit(lambda x, w: F.linear(x, w))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        jf(*_inputs((2, 4), (3, 4), requires_grad=False))
    src = str(thunder.last_traces(jf)[-1])
    assert src.count("dtype=torch.bfloat16") == 2 and "linear" in src
    prologue = str(thunder.last_prologue_traces(jf)[-1])
    assert "torch.get_autocast_dtype('cpu') is not torch.bfloat16" in prologue


def test_float64_is_never_cast():
    out = _compare(lambda a, b: a @ b, _inputs((3, 4), (4, 2), dtype=torch.float64), ctx=_autocast())
    assert out[0].dtype is torch.float64


def test_mlp_module_around():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
    jm = thunder.jit(model)
    out = _compare(model, _inputs((6, 8)), jfn=jm, ctx=_autocast(), params=list(model.parameters()))
    assert out[0].dtype is torch.bfloat16


def test_softmax_layer_norm_cross_entropy_around():
    # on CPU, softmax and layer_norm run in the autocast dtype and cross_entropy in float32, as in eager
    def f(x, w, g, b, target):
        h = x @ w
        p = torch.softmax(h, -1)
        n = F.layer_norm(h, (h.shape[-1],), g, b)
        return p, n, F.cross_entropy(h, target), F.log_softmax(h, -1)

    x, w, g, b = _inputs((5, 8), (8, 10), (10,), (10,))
    target = torch.randint(0, 10, (5,))
    out = _compare(f, [x, w, g, b, target], ctx=_autocast())
    assert [o.dtype for o in out] == [torch.bfloat16, torch.bfloat16, torch.float32, torch.bfloat16]


class _Attention(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.norm(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        # the same attention spelled out: matmul, softmax
        att = torch.softmax((q @ k.transpose(-2, -1)) * (1.0 / (C // self.heads) ** 0.5), dim=-1)
        y = y + att @ v
        return x + self.proj(y.transpose(1, 2).reshape(B, T, C))


def test_attention_block_around():
    torch.manual_seed(0)
    model = _Attention()
    out = _compare(model, _inputs((2, 5, 16)), jfn=thunder.jit(model), ctx=_autocast(), params=list(model.parameters()))
    assert out[0].dtype is torch.float32  # x (float32) + a bf16 projection promotes


def test_cat_stack_promote_around():
    def f(a, w, c):
        h = a @ w  # bf16
        return torch.cat([h, c], 0), torch.stack([h, c]), torch.cat([h, h])

    out = _compare(f, _inputs((2, 4), (4, 3), (2, 3)), ctx=_autocast())
    assert [o.dtype for o in out] == [torch.float32, torch.float32, torch.bfloat16]


# ----- autocast inside the jitted function ------------------------------------------------------------


def test_inside_nested_and_disabled():
    def f(x, w, b):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = F.linear(x, w, b)
            with torch.autocast("cpu", enabled=False):
                z = y.float() @ w  # float32: autocast off
                with torch.autocast("cpu"):  # dtype defaults to the current one (bf16)
                    u = z @ w.t()
            v = y @ w
        return y, z, u, v, x @ w.t()  # the last one outside any region: float32

    out = _compare(f, _inputs((4, 8), (16, 8), (16,)))
    assert [o.dtype for o in out] == [torch.bfloat16, torch.float32, torch.bfloat16, torch.bfloat16, torch.float32]


def test_inside_amp_autocast_and_float16():
    def f(x, w):
        with torch.amp.autocast("cpu", dtype=torch.float16):
            return torch.softmax(x @ w, -1), torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")

    jf = thunder.jit(f)
    x, w = _inputs((3, 4), (4, 5))
    (y, enabled, dtype), (ey, eenabled, edtype) = jf(x, w), f(x, w)
    assert (y.dtype, enabled, dtype) == (ey.dtype, eenabled, edtype) == (torch.float16, True, torch.float16)
    torch.testing.assert_close(y, ey, **LOW[torch.float16])
    assert not torch.is_autocast_enabled("cpu")  # tracing left the caller's state alone


@torch.autocast("cpu", dtype=torch.bfloat16)
def _decorated(x, w):
    return x @ w


def test_decorator_forms():
    out = _compare(_decorated, _inputs((3, 4), (4, 2)))
    assert out[0].dtype is torch.bfloat16

    def f(x, w):
        @torch.autocast("cpu", dtype=torch.bfloat16)
        def inner(a):
            return a @ w

        return inner(x), x @ w

    out = _compare(f, _inputs((3, 4), (4, 2)))
    assert [o.dtype for o in out] == [torch.bfloat16, torch.float32]


def test_inside_region_disabled_under_outer_autocast():
    # autocast around the call, switched off inside (as rotary embeddings do in Llama-style models)
    def f(x, w):
        with torch.autocast("cpu", enabled=False):
            a = x @ w
        return a, x @ w

    out = _compare(f, _inputs((3, 4), (4, 2)), ctx=_autocast())
    assert [o.dtype for o in out] == [torch.float32, torch.bfloat16]


def test_module_with_autocast_in_forward():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                h = self.fc(x)
            return F.cross_entropy(h.float(), torch.zeros(x.shape[0], dtype=torch.long))

    torch.manual_seed(0)
    m = M()
    _compare(m, _inputs((4, 8)), jfn=thunder.jit(m), params=list(m.parameters()))


# ----- the cache ----------------------------------------------------------------------------------------


def test_cache_entries_per_autocast_state():
    def f(x, w):
        return torch.softmax(x @ w, -1)

    jf = thunder.jit(f)
    x, w = _inputs((3, 4), (4, 5), requires_grad=False)
    assert jf(x, w).dtype is torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert jf(x, w).dtype is torch.bfloat16
    with torch.autocast("cpu", dtype=torch.float16):
        assert jf(x, w).dtype is torch.float16
    assert jf(x, w).dtype is torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert jf(x, w).dtype is torch.bfloat16
        with torch.autocast("cpu", enabled=False):
            assert jf(x, w).dtype is torch.float32
    assert thunder.cache_misses(jf) == 3 and thunder.cache_hits(jf) == 3


# ----- errors -------------------------------------------------------------------------------------------


def test_setting_autocast_state_directly_is_refused():
    def f(x):
        torch.set_autocast_enabled("cpu", True)
        return x @ x

    with pytest.raises(UnsupportedError, match=r"torch\.set_autocast_enabled\(\).*test_autocast\.py:\d+"):
        thunder.jit(f)(torch.randn(2, 2))
    assert not torch.is_autocast_enabled("cpu")


def test_regions_exited_out_of_order_are_refused():
    def f(x):
        a, b = torch.autocast("cpu"), torch.autocast("cpu", enabled=False)
        a.__enter__()
        b.__enter__()
        a.__exit__(None, None, None)
        return x @ x

    with pytest.raises(UnsupportedError, match=r"exited out of order.*test_autocast\.py:\d+"):
        thunder.jit(f)(torch.randn(2, 2))


class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_native_calls_under_autocast_are_refused():
    # an autograd.Function or a checkpoint runs as one PyTorch call, which the compiled program (autocast off, its
    # casts explicit) would run without autocast
    def function(x):
        with torch.autocast("cpu"):
            return _Double.apply(x @ x)

    def checkpointed(x):
        return torch.utils.checkpoint.checkpoint(torch.mm, x, x, use_reentrant=False)

    with pytest.raises(UnsupportedError, match=r"_Double\.apply .*under torch\.autocast.*test_autocast\.py:\d+"):
        thunder.jit(function)(torch.randn(2, 2))
    with torch.autocast("cpu"), pytest.raises(UnsupportedError, match=r"checkpoint under torch\.autocast"):
        thunder.jit(checkpointed)(torch.randn(2, 2))
    assert thunder.jit(checkpointed)(torch.randn(2, 2)).dtype is torch.float32  # without autocast: fine


def test_ops_without_a_symbol_get_eager_dtypes():
    # einsum, tensordot and conv2d run as opaque PyTorch calls; their casts are recorded like any other's
    def f(x, w, k):
        return torch.einsum("ij,jk->ik", x, w), torch.tensordot(x, w, 1), F.conv2d(x[None, None], k)

    out = _compare(f, _inputs((4, 4), (4, 4), (1, 1, 2, 2)), ctx=_autocast())
    assert {o.dtype for o in out} == {torch.bfloat16}


def test_an_opaque_call_autocast_changes_in_eager_is_refused():
    # F.multi_head_attention_forward has no symbol: it runs as one PyTorch call with autocast off, where eager's
    # inner matmuls run in bfloat16 (its outputs were float32 under thunder until 2026-11-25)
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)
    x = torch.randn(2, 5, 8)
    with torch.autocast("cpu", torch.bfloat16), pytest.raises(
            UnsupportedError, match=r"multi_head_attention_forward under torch\.autocast.*torch\.bfloat16"):
        thunder.jit(mha)(x, x, x)
    out, weights = thunder.jit(mha)(x, x, x)  # without autocast: eager's
    torch.testing.assert_close(out, mha(x, x, x)[0])
    # an opaque call autocast leaves alone (group_norm of a bfloat16 input) runs as before
    norm = torch.nn.Sequential(torch.nn.Conv2d(4, 4, 1), torch.nn.GroupNorm(2, 4))
    (out,) = _compare(norm, _inputs((2, 4, 3, 3)), ctx=_autocast(), params=list(norm.parameters()))
    assert out.dtype is torch.bfloat16


# ----- CUDA ---------------------------------------------------------------------------------------------


@CUDA
def test_cuda_around_fp32_and_lower_ops():
    # on CUDA softmax, log_softmax, layer_norm and exp run in float32, matmul in the autocast dtype
    def f(x, w, g, b):
        h = x @ w
        return h, torch.softmax(h, -1), F.layer_norm(h, (h.shape[-1],), g, b), h.exp(), F.log_softmax(h, -1)

    args = _inputs((5, 8), (8, 10), (10,), (10,), device="cuda")
    out = _compare(f, args, ctx=_autocast("cuda", torch.float16), low=torch.float16)
    assert [o.dtype for o in out] == [torch.float16] + [torch.float32] * 4


@CUDA
def test_cuda_inside_and_attention():
    torch.manual_seed(0)
    model = _Attention().cuda()

    def f(x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(x)

    _compare(f, _inputs((2, 5, 16), device="cuda"), params=list(model.parameters()))
