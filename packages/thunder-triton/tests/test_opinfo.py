"""PyTorch's OpInfos of elementwise, reduction and normalization ops through the Triton executor vs eager
(small samples: the interpreter is slow; float32, and on a GPU also float16 and bfloat16). Every sample must
match eager; every op listed must put at least one of its samples into a Triton kernel."""

import itertools

import pytest
import torch
from triton_helpers import jit_triton, regions, tolerances

import thunder

op_db = pytest.importorskip("torch.testing._internal.common_methods_invocations").op_db

pytestmark = pytest.mark.usefixtures("triton_ex")

FUSED = [
    "abs", "neg", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh",
    "tanh", "sqrt", "rsqrt", "erf", "erfc", "floor", "ceil", "trunc", "sign", "reciprocal", "sigmoid",
    "add", "sub", "mul", "div.no_rounding_mode", "maximum", "minimum", "where", "eq", "lt", "ge", "clamp",
    "lerp", "addcmul", "addcdiv", "nn.functional.relu", "nn.functional.gelu",
    "nn.functional.silu", "sum", "mean", "amax", "amin", "var", "std", "softmax", "log_softmax",
    "nn.functional.layer_norm", "nn.functional.rms_norm",
]
# correct, but their samples need what kernels leave to PyTorch (tensor exponents, multi-axis reductions)
UNFUSED = ["pow", "square", "prod", "logsumexp"]
OPS = {op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""): op for op in op_db}
MAX_NUMEL = 512  # the interpreter runs each program in numpy: keep samples small


def _small(sample) -> bool:
    tensors = [a for a in (sample.input, *sample.args, *sample.kwargs.values()) if isinstance(a, torch.Tensor)]
    return all(t.numel() <= MAX_NUMEL for t in tensors)


def _one_axis_first(sample) -> bool:
    """Samples reducing along one axis first (the ones kernels take)."""
    dims = [a for a in (*sample.args, sample.kwargs.get("dim")) if isinstance(a, int) and not isinstance(a, bool)]
    return not dims


@pytest.mark.parametrize("name", FUSED + UNFUSED)
def test_opinfo_matches_eager_and_fuses(name, device, dtype):
    op = OPS[name]
    if dtype not in op.supported_dtypes(device.type):
        pytest.skip(f"{name} does not support {dtype} on {device.type} in eager PyTorch")
    samples = [s for s in itertools.islice(op.sample_inputs(device.type, dtype), 40) if _small(s)]
    samples = sorted(samples, key=_one_axis_first)[:4]
    assert samples
    fused = 0
    for s in samples:
        def fn(*args, **kwargs):
            return op.op(*args, **kwargs)

        jfn = jit_triton(fn)
        actual = jfn(s.input, *s.args, **s.kwargs)
        expected = fn(s.input, *s.args, **s.kwargs)
        tol = dict(atol=1e-5, rtol=1e-4) if dtype is torch.float32 else tolerances(dtype)
        torch.testing.assert_close(actual, expected, equal_nan=True, msg=lambda m: f"{name} {s}: {m}", **tol)
        fused += bool(regions(thunder.last_traces(jfn)[-1]))
    assert fused or name in UNFUSED, f"no sample of {name} ran in a Triton kernel"
