"""Type promotion of the torch language against torch.result_type."""

import itertools

import pytest
import torch

from thunder.core import dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, tracectx
from thunder.torch.promotion import result_dtypes

TORCH_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.bfloat16, torch.float16,
                torch.float32, torch.float64, torch.complex64]
SCALARS = [True, 2, 2.5, 1j]


def _proxy(dt, ndim):
    return TensorProxy(shape=(2,) * ndim, dtype=dtypes.from_torch_dtype(dt), device="cpu")


def _tensor(dt, ndim):
    return torch.ones((2,) * ndim, dtype=dt)


@pytest.mark.parametrize("a,b", list(itertools.product(TORCH_DTYPES, TORCH_DTYPES)))
@pytest.mark.parametrize("ndims", [(1, 1), (1, 0), (0, 1)])
def test_tensor_tensor(a, b, ndims):
    with tracectx(TraceCtx()):
        _, result = result_dtypes(_proxy(a, ndims[0]), _proxy(b, ndims[1]))
    assert dtypes.to_torch_dtype(result) == torch.result_type(_tensor(a, ndims[0]), _tensor(b, ndims[1]))


@pytest.mark.parametrize("a,s", list(itertools.product(TORCH_DTYPES, SCALARS)))
def test_tensor_scalar(a, s):
    with tracectx(TraceCtx()):
        _, result = result_dtypes(_proxy(a, 1), s)
    assert dtypes.to_torch_dtype(result) == torch.result_type(_tensor(a, 1), s)


def test_low_precision_computes_in_float32():
    with tracectx(TraceCtx()):
        computation, result = result_dtypes(_proxy(torch.bfloat16, 1), _proxy(torch.bfloat16, 1))
    assert computation is dtypes.float32 and result is dtypes.bfloat16
