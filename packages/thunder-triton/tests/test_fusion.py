"""Regions through the Triton executor against eager PyTorch (on CPU tensors under TRITON_INTERPRET=1, on CUDA
tensors with a GPU): strides, broadcasting, dtypes, sizes, symbolic sizes, data dependencies and kernel reuse."""

import pytest
import thunder_triton
import torch
import torch.nn.functional as F
from thunder_triton import kernel_cache
from triton_helpers import check, jit_triton, regions, tolerances

import thunder

pytestmark = pytest.mark.usefixtures("triton_ex")


def test_one_kernel_for_a_normalization_softmax_and_gelu(device, dtype):
    def f(x, w, b):
        y = F.layer_norm(x, (x.shape[-1],), w, b)
        return torch.softmax(y, -1) * 2 + F.gelu(y)

    x, w, b = (torch.randn(shape, device=device, dtype=dtype) for shape in ((4, 8), (8,), (8,)))
    jfn = check(f, x, w, b, **tolerances(dtype))
    assert len(regions(thunder.last_traces(jfn)[-1])) == 1


def test_strided_and_non_contiguous_inputs(device, dtype):
    def f(a, b):
        return (a * b + a).sin().sum(-1), torch.exp(a) - b

    def randn(*shape):
        return torch.randn(shape, device=device, dtype=dtype)

    a = randn(9, 12)[::2, 3:].t()  # (9, 5), transposed and strided
    b = randn(5, 9).t()
    assert not a.is_contiguous() and not b.is_contiguous()
    check(f, a, b, **tolerances(dtype))
    check(f, randn(3, 4, 5).permute(2, 0, 1)[:, :, 1], randn(5, 3), **tolerances(dtype))


def test_broadcasting_inputs_and_reduced_values(device, dtype):
    def f(a, b, c):
        return torch.exp(a) * b + 1 - c.mean(0)

    a, b, c = (torch.randn(shape, device=device, dtype=dtype) for shape in ((4, 1, 6), (5, 1), (3, 5, 6)))
    check(f, a, b, c, **tolerances(dtype))


def test_dtypes_computed_in_float32(device, dtype):
    def f(x, w, b):
        y = F.layer_norm(x, (16,), w, b)
        return F.gelu(y) * torch.softmax(y, -1), y.sum(-1)

    args = [torch.randn(shape, device=device, dtype=dtype) for shape in ((6, 16), (16,), (16,))]
    check(f, *args, **tolerances(dtype, scale=2))


def test_mixed_dtypes_and_conversions(device):
    def f(a, b, mask):
        return torch.where(mask, a.float() * b, -b), (a > 0).to(torch.float32) + 0.5

    check(f, torch.randn(7, 3, dtype=torch.bfloat16, device=device), torch.randn(7, 3, device=device),
          torch.rand(7, 3, device=device) > 0.5)


def test_one_kernel_serves_many_sizes(device):
    def f(x):
        return torch.softmax(x * 2, -1) + 1

    kernel_cache.clear()
    jfn = jit_triton(f)
    for shape in [(3, 5), (4, 7), (2, 30), (8, 3)]:
        x = torch.randn(shape, device=device)
        torch.testing.assert_close(jfn(x), f(x))
    assert thunder.cache_misses(jfn) == 4  # a trace per shape (constant values)...
    assert kernel_cache.stats() == {"kernels": 1, "hits": 3}  # ...and one kernel for them all


def test_symbolic_sizes_are_kernel_arguments(device):
    def f(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, eps=1e-6) * 3

    jfn = jit_triton(f, cache="symbolic values")
    for n in (5, 7, 12):
        x, w = torch.randn(3, n, device=device), torch.randn(n, device=device)
        torch.testing.assert_close(jfn(x, w), f(x, w))
    trace = thunder.last_traces(jfn)[-1]
    (region,) = regions(trace)
    assert any(isinstance(a, thunder.core.proxies.IntegerProxy) for a in region.args)


def test_reductions_along_any_axis(device, dtype):
    def f(x):
        return x.sum(0), x.amax(1), x.var(2, keepdim=True), torch.log_softmax(x, 1)

    check(f, torch.randn(3, 4, 5, device=device, dtype=dtype), min_regions=3, **tolerances(dtype))


def test_no_cycle_through_a_non_fused_op(device):
    # b's region cannot include c: c reads m, which reads the region's a
    def f(x, w):
        a = x.sin()
        m = a @ w
        c = x.cos() + m
        return c * a

    jfn = check(f, torch.randn(4, 4, device=device), torch.randn(4, 4, device=device), min_regions=2)
    names = [b.sym.name for b in thunder.last_traces(jfn)[-1].bound_symbols]
    assert names.index("matmul") > 0


def test_identical_regions_share_a_kernel_and_sources_are_visible(device):
    def f(x, y, w, b):
        return F.layer_norm(x, (8,), w, b) + 1, F.layer_norm(y, (8,), w, b) + 1

    jfn = check(f, *(torch.randn(shape, device=device) for shape in ((2, 8), (3, 8), (8,), (8,))))
    trace = thunder.last_traces(jfn)[-1]
    found = regions(trace)
    assert len(found) == 2 and found[0].sym.name == found[1].sym.name
    sources = thunder_triton.kernel_sources(jfn)
    assert list(sources) == [found[0].sym.name]
    assert "@triton.jit" in sources[found[0].sym.name]
    text = str(trace)
    assert "#   @triton.jit" in text and f"{found[0].sym.name}(x, w, b" in text
    assert text.count("@triton.jit\n") <= 2  # printed once per kernel (helper + kernel), not per call
    assert callable(trace.python_callable())


def test_integer_and_boolean_elementwise(device):
    def f(a, b):
        return (a + b) * 2, (a > b) & (b > 0), torch.maximum(a, b)

    check(f, torch.randint(-5, 5, (4, 6), device=device), torch.randint(-5, 5, (4, 6), device=device))


@pytest.mark.parametrize("op", ["layer_norm", "softmax", "rms_norm"])
def test_rows_as_long_as_one_block_takes(device, dtype, op):
    # the longest static row a reduction kernel takes (MAX_PERSISTENT_REDUCTION): on a GPU one program holds
    # the whole row in registers with 16 warps, the largest block the launcher picks (compiled for sm_90 in CI)
    n = thunder_triton.claims.MAX_PERSISTENT_REDUCTION
    fns = {"layer_norm": lambda x, w: F.layer_norm(x, (n,), w, None), "softmax": lambda x, w: torch.softmax(x * w, -1),
           "rms_norm": lambda x, w: F.rms_norm(x, (n,), w, eps=1e-6)}
    x, w = torch.randn(3, n, device=device, dtype=dtype), torch.randn(n, device=device, dtype=dtype)
    check(fns[op], x, w, **tolerances(dtype))


def test_rows_longer_than_one_block_are_left_to_pytorch(device):
    def f(x):
        return torch.softmax(x, -1)

    x = torch.randn(2, thunder_triton.claims.MAX_PERSISTENT_REDUCTION + 1, device=device)
    jfn = jit_triton(f)
    torch.testing.assert_close(jfn(x), f(x))
    assert not regions(thunder.last_traces(jfn)[-1])
