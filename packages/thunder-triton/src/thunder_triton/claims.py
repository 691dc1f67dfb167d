"""Which bound symbols the Triton executor claims, decided per prim by the tables in ``rules``.

A torch-language symbol (``ltorch.softmax``, ``ltorch.layer_norm``) is claimed when every prim of its
decomposition is, so the torch executor's single call is replaced by fusible prims only when all of
them can go into kernels. Claimed prims are rebound to *claim symbols* (``triton_claim.exp``): they mark
what the fusion pass may group, and are given back to PyTorch when they end up in no region.
"""

from __future__ import annotations

import os

from thunder.core import dtypes
from thunder.core.proxies import NumberProxy, TensorProxy, pyval
from thunder.extend.claiming import prim_name
from thunder_triton import rules

__all__ = ["interpreting", "device_ok", "prim_name", "claimable_prim", "MAX_PERSISTENT_REDUCTION"]

# A reduced row is held in registers (one pass over memory); longer static rows are left to PyTorch.
MAX_PERSISTENT_REDUCTION = 16384


def interpreting() -> bool:
    """TRITON_INTERPRET=1: Triton runs kernels with numpy on CPU tensors (how the tests run)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _tensors(bsym) -> list[TensorProxy]:
    return [p for p in (*bsym.flat_proxy_args, *bsym.flat_proxy_outs) if isinstance(p, TensorProxy)]


def device_ok(t: TensorProxy) -> bool:
    # the interpreter reads host memory; compiled kernels need CUDA memory
    return t.device.type == ("cpu" if interpreting() else "cuda")


def _number_ok(x) -> bool:
    return not isinstance(pyval(x) if isinstance(x, NumberProxy) else x, complex)


def _kind_ok(bsym, kind: str) -> bool:
    operands = [a for a in bsym.args if isinstance(a, TensorProxy)]
    if kind == "float":
        return all(dtypes.is_float_dtype(t.dtype) for t in operands)
    if kind == "integer":
        return all(not dtypes.is_float_dtype(t.dtype) for t in operands)
    return True


def _elementwise_ok(bsym, name) -> bool:
    _, kind = rules.ELEMENTWISE[name]
    return _kind_ok(bsym, kind) and all(_number_ok(a) for a in bsym.args)


def _pow_ok(bsym, name) -> bool:
    base, exponent = bsym.args
    return isinstance(base, TensorProxy) and dtypes.is_float_dtype(base.dtype) and \
        rules.constant_power(exponent) is not None


def _reduction_ok(bsym, name) -> bool:
    a, dims = bsym.args[0], bsym.args[1]
    if not (isinstance(a, TensorProxy) and dtypes.is_float_dtype(a.dtype) and len(tuple(dims)) == 1 and a.ndim >= 1):
        return False
    size = a.shape[tuple(dims)[0]]
    return not isinstance(size, int) or 0 < size <= MAX_PERSISTENT_REDUCTION


def _always(bsym, name) -> bool:
    return True


# prim name -> extra checker (beyond device, dtype and grad rules shared by all)
CHECKERS = {
    **{name: _elementwise_ok for name in rules.ELEMENTWISE},
    "pow": _pow_ok,
    "convert_element_type": _always,
    "broadcast_in_dim": _always,
    **{name: _reduction_ok for name in rules.REDUCTIONS},
}


def claimable_prim(bsym) -> bool:
    name = prim_name(bsym)
    checker = CHECKERS.get(name)
    if checker is None:
        return False
    tensors = _tensors(bsym)
    if not tensors or not all(device_ok(t) and rules.fusible_dtype(t.dtype) for t in tensors):
        return False
    return checker(bsym, name)
