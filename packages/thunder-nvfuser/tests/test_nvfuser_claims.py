"""What the nvFuser executor claims, and the reason for what it does not: the tables, and single prims on CUDA
proxies."""

import pytest
from thunder_nvfuser import claims, translate

from thunder.core import dtypes, prims
from thunder.core.proxies import TensorProxy
from thunder.core.symbol import BoundSymbol
from thunder.core.trace import TraceCtx, tracectx

# prims that do something other than compute on tensors (the program's plumbing), never fused
NOT_COMPUTATION = {"copy_to_out_", "update_without_grad", "set_grad_enabled", "manual_seed", "get_rng_state",
                   "set_rng_state", "true_divide_numbers", "round_to_digits", "make_value", "raise_exception",
                   # eager's backward errors raised where the backward reaches an op, and a tensor's version counter
                   "raise_in_backward", "derivative_not_implemented", "tensor_version"}


def test_every_computing_prim_is_translated_or_has_a_reason():
    tables = set(translate.TRANSLATIONS) | set(claims.LEFT_TO_OTHERS)
    computing = {name for name, sym in prims.all_prims.items()
                 if not {"prologue", "epilogue"} & set(sym.tags) and name not in NOT_COMPUTATION}
    assert computing - tables == set(), "prims with neither an nvFuser translation nor a reason to leave them"
    assert set(translate.TRANSLATIONS) & set(claims.LEFT_TO_OTHERS) == set()
    assert set(claims.CHECKERS) == set(translate.TRANSLATIONS)


def _bound(name, make_args, **kwargs) -> BoundSymbol:
    """The bound prim ``name`` of the arguments ``make_args()`` makes (proxies are made while tracing)."""
    trace = TraceCtx("t")
    with tracectx(trace):
        prims.all_prims[name](*make_args(), **kwargs)
    return trace.bound_symbols[-1]


def _t(shape=(4, 8), dtype=dtypes.float32, device="cuda"):
    return TensorProxy(shape=shape, dtype=dtype, device=device)


@pytest.mark.parametrize("make, reason", [
    (lambda: _bound("exp", lambda: (_t(),)), None),
    (lambda: _bound("add", lambda: (_t(dtype=dtypes.bfloat16), 2.0)), None),
    (lambda: _bound("sum", lambda: (_t(), (1,))), None),
    (lambda: _bound("slice", lambda: (_t(), (0, 0), (4, 8))), None),
    (lambda: _bound("exp", lambda: (_t(device="cpu"),)), "a cpu tensor: nvFuser runs on CUDA tensors"),
    (lambda: _bound("neg", lambda: (_t(dtype=dtypes.uint8),)), "dtype dtypes.uint8: nvFuser has no such type"),
    (lambda: _bound("exp", lambda: (_t(dtype=dtypes.complex64),)), "dtype dtypes.complex64"),
    (lambda: _bound("slice", lambda: (_t(), (0, 0), (4, 8), (1, 2))), "a strided slice: nvFuser slices with stride 1 only"),
    (lambda: _bound("matmul", lambda: (_t(), _t((8, 4)))), "matrix products run on cuBLAS"),
    (lambda: _bound("uniform", lambda: ((4,), 0.0, 1.0), device="cuda", dtype=dtypes.float32), "torch's generator"),
    (lambda: _bound("take", lambda: (_t(), _t((3,), dtypes.int64), 0)), "out-of-range index"),
])
def test_why_not(make, reason):
    bsym = make()
    found = claims.why_not(bsym)
    if reason is None:
        assert found is None and claims.claimable_prim(bsym)
    else:
        assert found is not None and reason in found, found
        assert not claims.claimable_prim(bsym)


def test_examine_reports_nvfusers_reasons(nvfuser_claims):
    import torch

    import thunder

    jfn = thunder.jit(lambda a, b: (a @ b).exp(), executors=["torch"])  # traced on CPU: nvFuser takes nothing
    jfn(torch.randn(3, 3), torch.randn(3, 3))
    reasons = {c.symbol: c.reason for c in thunder.examine.claims(jfn, nvfuser_claims)}
    assert reasons["ltorch.matmul"] == "its decomposition has prims.matmul: matrix products run on cuBLAS through " \
        "the torch executor (nvFuser's matmul scheduler is opt-in)", reasons
    assert reasons["ltorch.exp"] == "its decomposition has prims.exp: a cpu tensor: nvFuser runs on CUDA tensors"
