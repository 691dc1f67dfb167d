"""The nvFuser executor on a GPU, against eager: PyTorch's OpInfo samples of the ops it claims (forward and
gradients), a GPT block, Adam/AdamW steps with in-place outputs, symbolic sizes. Every test skips, with the
executor's reason, where nvFuser cannot run (no GPU, no matching nvFuser build): CI runs none of them; a GPU session
runs them (benchmarks/gpu_session.sh nvfuser-tests)."""

import itertools

import pytest
import thunder_nvfuser
import torch
from models import SHAPES, Block, LlamaBlock, parameters

import thunder
from thunder.testing.optimizers import assert_steps_match_eager

pytestmark = pytest.mark.usefixtures("nvfuser_ex")

# ops whose decompositions are prims nvFuser claims (elementwise, broadcasts, casts, reductions, normalizations)
OPS = [
    "abs", "neg", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh",
    "tanh", "asin", "acos", "atan", "sqrt", "rsqrt", "erf", "erfc", "erfinv", "lgamma", "floor", "ceil", "trunc",
    "round", "sign", "reciprocal", "sigmoid", "add", "sub", "mul", "div.no_rounding_mode", "div.trunc_rounding",
    "remainder", "fmod", "pow", "maximum", "minimum", "atan2", "where", "eq", "ne", "lt", "ge", "clamp", "lerp",
    "addcmul", "addcdiv", "nn.functional.relu", "nn.functional.gelu", "nn.functional.silu", "sum", "mean", "amax",
    "amin", "prod", "var", "std", "softmax", "log_softmax", "nn.functional.layer_norm", "nn.functional.rms_norm",
    "cat", "nn.functional.pad",
]
# views alone are PyTorch's (no fusion for them): checked for correctness, not for fusing
VIEWS = ["reshape", "permute", "transpose", "squeeze", "unsqueeze", "expand"]
TOLERANCES = {torch.float32: dict(atol=1e-5, rtol=1e-4), torch.bfloat16: dict(atol=2e-2, rtol=2e-2)}


def _regions(jfn) -> list:
    return thunder_nvfuser.regions(jfn)


def _op_db():
    return {op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""): op
            for op in pytest.importorskip("torch.testing._internal.common_methods_invocations").op_db}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", OPS + VIEWS)
def test_opinfo_forward_and_gradients_match_eager(name, dtype):
    op = _op_db()[name]
    if dtype not in op.supported_dtypes("cuda"):
        pytest.skip(f"{name} does not support {dtype} on CUDA in eager PyTorch")
    samples = list(itertools.islice(op.sample_inputs("cuda", dtype, requires_grad=op.supports_autograd), 6))
    fused = 0
    for s in samples:
        def fn(*args, **kwargs):
            return op.op(*args, **kwargs)

        jfn = thunder.jit(fn, executors=["nvfuser"])
        actual = jfn(s.input, *s.args, **s.kwargs)
        expected = fn(s.input, *s.args, **s.kwargs)
        torch.testing.assert_close(actual, expected, equal_nan=True, **TOLERANCES[dtype], msg=lambda m: f"{s}: {m}")
        fused += bool(_regions(jfn))
        if op.supports_autograd and isinstance(expected, torch.Tensor) and expected.requires_grad:
            inputs = [t for t in (s.input, *s.args) if isinstance(t, torch.Tensor) and t.requires_grad]
            g = torch.randn_like(expected)
            actual_grads = torch.autograd.grad(actual, inputs, g, allow_unused=True)
            expected_grads = torch.autograd.grad(expected, inputs, g, allow_unused=True)
            for a, e in zip(actual_grads, expected_grads):
                if e is not None:
                    torch.testing.assert_close(a, e, equal_nan=True, **TOLERANCES[dtype])
    assert fused or name in VIEWS, f"no sample of {name} ran in an nvFuser fusion"


def _close_in_norm(actual, expected, dtype, msg=""):
    error = (actual.double() - expected.double()).norm() / expected.double().norm().clamp_min(1e-30)
    bound = {torch.float32: 1e-5, torch.bfloat16: 3e-2}[dtype]
    assert torch.isfinite(actual).all() and error <= bound, f"{msg} relative error {error:.2e} > {bound:.0e}"


@pytest.mark.parametrize("model", [Block, LlamaBlock], ids=["gpt", "llama"])
@pytest.mark.parametrize("executors", [["nvfuser"], ["cudnn", "nvfuser"]], ids=["nvfuser", "cudnn+nvfuser"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_block_forward_and_backward(dtype, executors, model):
    if "cudnn" in executors:
        ex = thunder.extend.get_executor("cudnn")
        if ex is None or not ex.is_available() or dtype is torch.float32:
            pytest.skip("cuDNN attention is not available here (or not for float32)")
    torch.manual_seed(0)
    block, ref = model(64, 4).cuda().to(dtype), model(64, 4).cuda().to(dtype)
    ref.load_state_dict(block.state_dict())
    x = torch.randn(2, 16, 64, device="cuda", dtype=dtype, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    jblock = thunder.jit(block, executors=executors)
    out, expected = jblock(x), ref(x_ref)
    _close_in_norm(out, expected, dtype, "output")
    g = torch.randn_like(out)
    out.backward(g)
    expected.backward(g)
    _close_in_norm(x.grad, x_ref.grad, dtype, "x.grad")
    for (name, p), p_ref in zip(block.named_parameters(), ref.parameters()):
        _close_in_norm(p.grad, p_ref.grad, dtype, name)
    assert len(_regions(jblock)) >= 4
    programs = thunder_nvfuser.fusion_definition(jblock)
    assert all("define_tensor" in text for text in programs.values()), programs


@pytest.mark.parametrize("opt_cls", [torch.optim.Adam, torch.optim.AdamW])
def test_optimizer_step_updates_in_place(opt_cls):
    ps, refs = parameters(SHAPES, "cuda"), parameters(SHAPES, "cuda")
    opt, ref_opt = opt_cls(ps, lr=0.01, foreach=False), opt_cls(refs, lr=0.01, foreach=False)
    step = thunder.jit(opt.step, executors=["nvfuser"])
    assert_steps_match_eager(step, opt, ref_opt, steps=4)
    trace = thunder.last_traces(step)[-1]
    calls = "\n".join(ln for ln in str(trace).splitlines() if not ln.lstrip().startswith("#"))
    assert "copy_" not in calls, trace  # every update is an aliased output of a fusion
    assert thunder.cache_misses(step) <= 2  # the first step creates the state; the others reuse one entry


def test_symbolic_sizes_reuse_trace_and_definition():
    def f(x, w):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), w) * 2

    w = torch.randn(64, device="cuda")
    jfn = thunder.jit(f, executors=["nvfuser"], cache="symbolic values")
    for rows in (8, 24, 40):
        x = torch.randn(rows, 64, device="cuda")
        torch.testing.assert_close(jfn(x, w), f(x, w))
    assert thunder.cache_misses(jfn) == 1
    (region,) = _regions(jfn)
    assert len(region.definitions) == 1  # one input descriptor: sizes are symbolic in the definition


def test_new_layout_builds_another_definition():
    jfn = thunder.jit(lambda a, b: (a * b).exp(), executors=["nvfuser"])
    a = torch.randn(16, 32, device="cuda")
    b = torch.randn(32, 16, device="cuda").t()  # same shape, transposed strides
    torch.testing.assert_close(jfn(a, a), (a * a).exp())
    torch.testing.assert_close(jfn(a, b), (a * b).exp())
    (region,) = _regions(jfn)
    assert len(region.definitions) == 2


def test_region_of_creation_ops_runs_on_the_traced_device():
    def f(x):  # the matmul splits the region: arange * 2 is a fusion without tensor inputs
        return x @ (torch.arange(8, device=x.device) * 2).float()

    jfn = thunder.jit(f, executors=["nvfuser"])
    x = torch.randn(3, 8, device="cuda")
    torch.testing.assert_close(jfn(x), f(x))
    assert any(not r.tensor_inputs for r in _regions(jfn)), thunder.last_traces(jfn)[-1]
