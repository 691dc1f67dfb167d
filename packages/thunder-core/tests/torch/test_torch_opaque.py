"""The opaque fallback: torch ops with no torch-language symbol run as one PyTorch call, checked against eager."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import thunder
from thunder.core.errors import UnsupportedError
from thunder.torch.opaque import OPAQUE_ID_PREFIX, OpaqueFallbackWarning, opaque_symbol


def _jit_run(fn, *args):
    jfn = thunder.jit(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OpaqueFallbackWarning)
        out = jfn(*args)
    return out, thunder.last_traces(jfn)[-1].python()


def _assert_same(actual, expected):
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        torch.testing.assert_close(actual, expected, equal_nan=True)
    else:
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _assert_same(a, e)


x, y = torch.randn(3, 4), torch.rand(3, 4) + 0.1

CASES = {
    # name: (fn, args, what the final trace calls)
    "torch_builtin": (lambda a, b: torch.addcmul(a, b, b, value=0.5), (x, y), "torch.addcmul("),
    "tensor_method": (lambda a, b: a.hypot(b), (x, y), "torch.Tensor.hypot("),
    "unbound_descriptor": (lambda a, b: torch.Tensor.addcdiv(a, a, b), (x, y), "torch.Tensor.addcdiv("),
    "special": (lambda a, b: torch.special.xlogy(a, b), (x, y), "torch.special.xlogy("),
    "nn_functional_python": (lambda a: F.hardtanh(a, -0.5, 0.5), (x,), "torch.nn.functional.hardtanh("),
    "aten_overload": (lambda a, b: torch.ops.aten.hypot.default(a, b), (x, y), "torch.ops.aten.hypot.default("),
    "property": (lambda a: a.mH + 1, (x,), "Tensor_mH("),
    "structseq": (lambda a: torch.sort(a, 1, descending=True), (x,), "torch.sort("),
    "structseq_fields": (lambda a: torch.sort(a, 0).indices + 1, (x,), "torch.sort("),
    "list_input": (lambda a, b: torch.block_diag(a, b), (x, y), "torch.block_diag("),
    "tuple_output": (lambda a: torch.meshgrid(a[0], a[1, :2], indexing="ij"), (x,), "torch.meshgrid("),
    "int_result": (lambda a: torch.bucketize(a, torch.tensor([-1.0, 0.0, 1.0])), (x,), "torch.bucketize("),
    "mixed_with_symbols": (lambda a, b: (a.sin() * torch.logaddexp(a, b)).sum(1), (x, y), "torch.logaddexp("),
    "dtype_kwarg": (lambda a: torch.cumsum(a, 1, dtype=torch.float64), (x,), "torch.cumsum("),
}


@pytest.mark.parametrize("name", list(CASES))
def test_opaque_matches_eager(name):
    fn, args, call = CASES[name]
    if name == "int_result":  # a tensor constant inside the function is not a proxy: pass it in
        boundaries = torch.tensor([-1.0, 0.0, 1.0])
        fn, args = (lambda a, b: torch.bucketize(a, b)), (x, boundaries)
    actual, src = _jit_run(fn, *args)
    _assert_same(actual, fn(*args))
    assert call in src, src


def test_one_symbol_per_callable_with_opaque_id():
    sym = opaque_symbol(torch.Tensor.hypot)
    assert sym is opaque_symbol(torch.Tensor.hypot)
    assert sym.id == OPAQUE_ID_PREFIX + "torch.Tensor.hypot"
    assert opaque_symbol(torch.special.xlogy).id == OPAQUE_ID_PREFIX + "torch.special.xlogy"


def test_warns_once_per_op_naming_it():
    def fn(a):
        return torch.special.i1e(a) + torch.special.i1e(a * 2)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        thunder.jit(fn)(x)
        thunder.jit(fn)(x * 3)
    msgs = [str(w.message) for w in caught if issubclass(w.category, OpaqueFallbackWarning)]
    assert len([m for m in msgs if "torch.special.i1e" in m]) <= 1
    # (<= 1: another test may have run it first in this process; the first use in a process warns)


def test_first_use_warns():
    fn = torch.special.i0e
    from thunder.torch import opaque

    opaque._warned.discard(fn)
    with pytest.warns(OpaqueFallbackWarning, match="torch.special.i0e"):
        thunder.jit(lambda a: torch.special.i0e(a))(x)


def test_random_opaque_ops_are_kept_and_ordered():
    # F.rrelu in training mode draws random numbers: tagged random/side_effect, never merged or dropped
    def fn(a):
        F.rrelu(a, training=True)  # unused, but eager's generator advances
        return F.rrelu(a, training=True), F.rrelu(a, training=True)

    torch.manual_seed(0)
    expected = fn(x)
    state = torch.get_rng_state()
    torch.manual_seed(0)
    actual, src = _jit_run(fn, x)
    _assert_same(actual, expected)
    assert torch.equal(torch.get_rng_state(), state)
    assert src.count("torch.nn.functional.rrelu(") == 3


@pytest.mark.parametrize("fn,what", [
    (lambda a: torch.histogram(a, bins=3), "torch.histogram"),
    (lambda a: torch.histogramdd(a.reshape(-1, 1), bins=3), "torch.histogramdd"),
])
def test_data_dependent_shapes_without_a_size_rule_are_refused(fn, what):
    # nonzero, unique, masked_select, x[mask] ... read their size (tests/test_values_from_tensor_data.py)
    with pytest.raises(UnsupportedError, match=what) as info:
        thunder.jit(fn)(x)
    assert "test_torch_opaque.py" in str(info.value)  # the user's line


@pytest.mark.parametrize("fn", [
    lambda a: a.hypot_(a),
    lambda a: torch.hypot(a, a, out=a),
    lambda a: F.hardtanh(a, inplace=True),
    lambda a: a[0].index_fill_(0, torch.tensor([1]), 2.0),
], ids=["method", "out", "inplace_kwarg", "through_view"])
def test_inplace_through_the_fallback_updates_like_eager(fn):
    # the opaque out-of-place call, then the update: the input (and what was returned) as eager has them
    eager_x, jit_x = x.clone(), x.clone()
    expected = fn(eager_x).clone()
    actual = thunder.jit(fn)(jit_x)
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(jit_x, eager_x)


def test_inplace_without_an_out_of_place_form_is_refused_with_the_reason():
    with pytest.raises(UnsupportedError, match="fill_diagonal_.*no out-of-place form") as info:
        thunder.jit(lambda a: a.fill_diagonal_(0.0))(x.clone())
    assert "test_torch_opaque.py" in str(info.value)


@pytest.mark.parametrize("fn", [lambda a: a.data_ptr(), lambda a: a.untyped_storage()])
def test_non_tensor_results_are_refused(fn):
    with pytest.raises(UnsupportedError, match="not tensors|returns|address of the tensor's memory"):
        thunder.jit(fn)(x)


def test_validation_errors_are_pytorch_errors():
    fn = lambda a, b: torch.Tensor.hypot(a, b)  # noqa: E731
    with pytest.raises(RuntimeError):
        fn(x, torch.randn(5))
    with pytest.raises(RuntimeError):
        thunder.jit(fn)(x, torch.randn(5))


def test_unknown_attribute_is_attribute_error():
    with pytest.raises(AttributeError):
        thunder.jit(lambda a: a.no_such_method())(x)


@pytest.mark.skipif(not hasattr(torch, "_grouped_mm"), reason="torch._grouped_mm needs torch >= 2.9")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_grouped_mm_on_cpu_runs_like_eager_where_its_meta_function_asks_cuda_s_dtypes(dtype):
    # the meta function checks CUDA's kernel (bfloat16 only); the CPU kernel takes float32 too, as MoE layers of
    # transformers use it on CPU when nothing compiles them: outputs and gradients are eager's
    g = torch.Generator().manual_seed(0)
    a = torch.randn(12, 8, generator=g, dtype=dtype, requires_grad=True)
    w = torch.randn(3, 8, 8, generator=g, dtype=dtype, requires_grad=True)
    offs = torch.tensor([4, 4, 12], dtype=torch.int32)

    def fn(a, w, offs):
        return torch._grouped_mm(a, w, offs=offs).sin()

    expected = fn(a, w, offs)
    expected_grads = torch.autograd.grad(expected.sum(), (a, w))
    actual, _ = _jit_run(fn, a, w, offs)
    _assert_same(actual, expected)
    for got, want in zip(torch.autograd.grad(actual.sum(), (a, w)), expected_grads, strict=True):
        _assert_same(got, want)

