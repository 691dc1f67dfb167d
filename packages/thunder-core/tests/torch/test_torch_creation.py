import pytest
import torch
from torchlang_helpers import RUNNERS, check, check_raises, f32, i64

import thunder.torch as ltorch
from thunder.core import dtypes
from thunder.core.trace import get_tracectx


def T():
    """torch eagerly, the torch language while tracing: torch.zeros(2, 3) has no proxy to dispatch on."""
    return ltorch if get_tracectx() is not None else torch


CASES = {
    "zeros": (lambda: T().zeros(2, 3), "torch.zeros"),
    "zeros_tuple_dtype": (lambda: T().zeros((2, 3), dtype=torch.int64), "torch.zeros"),
    "ones": (lambda: T().ones(4, dtype=torch.float64, device="cpu"), "torch.ones"),
    "ones_torch_device": (lambda: T().ones([2], device=torch.device("cpu")), "torch.ones"),
    "full": (lambda: T().full((2, 3), 1.5), "torch.full"),
    "full_int": (lambda: T().full((2,), 7), "torch.full"),
    "full_bool": (lambda: T().full((2,), True), "torch.full"),
    "arange": (lambda: T().arange(5), "torch.arange"),
    "arange_start_step": (lambda: T().arange(2, 11, 3), "torch.arange"),
    "arange_neg_step": (lambda: T().arange(5, -3, -2), "torch.arange"),
    "arange_float": (lambda: T().arange(0, 1, 0.25), "torch.arange"),
    "arange_dtype": (lambda: T().arange(4, dtype=torch.float32), "torch.arange"),
    "tensor": (lambda: T().tensor([[1, 2], [3, 4]]), "torch.tensor"),
    "tensor_float": (lambda: T().tensor([1, 2.5]), "torch.tensor"),
    "tensor_scalar_dtype": (lambda: T().tensor(3, dtype=torch.float64), "torch.tensor"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_creation(name):
    fn, call = CASES[name]
    check(fn, calls=(call,) if call else ())


def test_thunder_dtype_argument():
    check(lambda: T().zeros(2, dtype=dtypes.bfloat16 if get_tracectx() else torch.bfloat16), calls=("torch.zeros",))


LIKE = {
    "zeros_like": (lambda x: torch.zeros_like(x), f32(2, 3), "torch.zeros_like"),
    "ones_like_dtype": (lambda x: torch.ones_like(x, dtype=torch.int64), f32(2, 3), "torch.ones_like"),
    "full_like": (lambda x: torch.full_like(x, 3), i64(2, 3), "torch.full_like"),
    "new_zeros": (lambda x: x.new_zeros(2, 2), i64(3), None),
    "new_ones": (lambda x: x.new_ones((3,), dtype=torch.float64), f32(3), None),
    "new_full": (lambda x: x.new_full((2,), 4.0), f32(3), None),
}


@pytest.mark.parametrize("name", list(LIKE))
def test_like(name):
    fn, x, call = LIKE[name]
    check(fn, x, calls=(call,) if call else ())


@pytest.mark.parametrize("runner", list(RUNNERS))
def test_empty_is_zeros(runner):
    out, _ = RUNNERS[runner](lambda x: (ltorch.empty(2, 3, dtype=torch.int64), torch.empty_like(x)), f32(4))
    torch.testing.assert_close(out[0], torch.zeros(2, 3, dtype=torch.int64))
    torch.testing.assert_close(out[1], torch.zeros(4))


ERRORS = {
    "arange_zero_step": (RuntimeError, lambda: T().arange(0, 5, 0)),
    "arange_sign": (RuntimeError, lambda: T().arange(5, 0, 1)),
    "zeros_negative": (RuntimeError, lambda: T().zeros(2, -1)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_creation_error(name):
    exc, fn = ERRORS[name]
    check_raises(exc, fn)


TENSOR_OF_TENSORS = {
    "0-d tensors": lambda x: torch.tensor([x.sum(), x.mean()]),
    "an int64 tensor and a float": lambda x: torch.tensor([x.sum().long(), 2.5]),
    "a float64 tensor and an int": lambda x: torch.tensor([x.double().sum(), 2]),
    "a bool tensor and an int": lambda x: torch.tensor([(x > 0).any(), 2]),
    "nested": lambda x: torch.tensor([[x.sum()], [x.max()]]),
    "bfloat16 tensors": lambda x: torch.tensor([x.sum().bfloat16(), x.mean().bfloat16()]),
    "a dtype asked": lambda x: torch.tensor([x.sum(), 1.0], dtype=torch.float64),
    "a tensor itself": lambda x: torch.tensor(x * 2),
}


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
@pytest.mark.parametrize("name", TENSOR_OF_TENSORS)
def test_tensor_of_tensors_is_eager_s(name):
    # eager takes 0-d tensors as values (their dtypes promoted with the numbers' defaults), detached
    import thunder

    fn = TENSOR_OF_TENSORS[name]
    x = torch.randn(3, requires_grad=True)
    expected, actual = fn(x), thunder.jit(fn)(x)
    assert (actual.dtype, actual.shape, actual.requires_grad) == (expected.dtype, expected.shape, expected.requires_grad)
    torch.testing.assert_close(actual, expected)
