"""An op failing on tensor data inside the program's own ``try`` block (an index out of range, a matrix that is not
positive-definite): tracing cannot see it fail, so the compiled program raises where eager catches the error and
goes on. The call then runs eagerly: eager's result (with a warning naming the error), or eager's error where the
program does not catch it."""

import warnings

import pytest
import torch

import thunder
from thunder.frontend.jit import CompiledProgramFailedWarning


def _index_or_zeros(x, idx):
    try:
        return x[idx]
    except IndexError:
        return x[:1] * 0


def _index_select_or_first(x, idx):
    try:
        y = x.index_select(0, idx)
    except (IndexError, RuntimeError):
        y = x[:1]
    return y * 2


def _cholesky_or_zeros(x):
    try:
        return torch.linalg.cholesky(x).contiguous()
    except RuntimeError:
        return x * 0


CASES = {
    "getitem": (_index_or_zeros, [(torch.randn(3), torch.tensor([0, 1])), (torch.randn(3), torch.tensor([0, 5]))]),
    "index_select": (_index_select_or_first,
                     [(torch.randn(3), torch.tensor([0, 1])), (torch.randn(3), torch.tensor([0, 5]))]),
    "cholesky": (_cholesky_or_zeros, [(torch.eye(2) * 2,), (-torch.eye(2),)]),
}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_an_error_from_tensor_data_caught_by_the_program(name, requires_grad):
    fn, calls = CASES[name]
    jfn = thunder.jit(fn)
    for args in (*calls, *calls):
        eager_args = [a.clone().requires_grad_(requires_grad and a.is_floating_point()) for a in args]
        jit_args = [a.clone().requires_grad_(requires_grad and a.is_floating_point()) for a in args]
        expected = fn(*eager_args)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            actual = jfn(*jit_args)
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
        failed = [w for w in caught if issubclass(w.category, CompiledProgramFailedWarning)]
        assert len(failed) <= 1
        if requires_grad:
            expected.sum().backward()
            actual.sum().backward()
            torch.testing.assert_close(jit_args[0].grad, eager_args[0].grad, rtol=0, atol=0)


def test_an_uncaught_error_from_tensor_data_is_eagers():
    def fn(x, idx):
        return x[idx] * 2

    jfn = thunder.jit(fn)
    jfn(torch.randn(3), torch.tensor([0, 1]))
    with pytest.raises(IndexError) as eager:
        fn(torch.randn(3), torch.tensor([0, 5]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # eager raises too: no warning
        with pytest.raises(IndexError) as jitted:
            jfn(torch.randn(3), torch.tensor([0, 5]))
    assert str(jitted.value) == str(eager.value)
