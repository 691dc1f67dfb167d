"""Which bound symbols the nvFuser executor claims: a checker per prim, keyed by prim name, and the reason for
each prim it leaves to others.

A prim is claimed when it has a translation (``translate.TRANSLATIONS``), its checker accepts the arguments, and
every tensor is a CUDA tensor of a dtype nvFuser has. A torch-language symbol (``softmax``, ``layer_norm``,
``gelu``) is claimed when every prim of its decomposition is (``thunder.extend.ClaimingFusionExecutor``).
:func:`why_not` says why a prim is not claimed.
"""

from __future__ import annotations

from thunder.core.proxies import NumberProxy, TensorProxy, pyval
from thunder.extend.claiming import prim_name
from thunder_nvfuser import translate

__all__ = ["claimable_prim", "why_not", "LEFT_TO_OTHERS", "CHECKERS"]

# Prims nvFuser could express but that stay with the torch executor, and why (what a user reading why_not sees).
LEFT_TO_OTHERS = {
    "matmul": "matrix products run on cuBLAS through the torch executor (nvFuser's matmul scheduler is opt-in)",
    "linear": "matrix products run on cuBLAS through the torch executor (nvFuser's matmul scheduler is opt-in)",
    "uniform": "random numbers must follow torch's generator (same seed, same numbers as eager); nvFuser's Philox "
               "stream differs",
    "take": "eager raises on an out-of-range index; an nvFuser gather does not check",
    "take_along_axis": "eager raises on an out-of-range index; an nvFuser gather does not check",
    "index": "eager raises on an out-of-range index; an nvFuser gather does not check",
    "index_add": "eager raises on an out-of-range index; an nvFuser scatter does not check",
    "scatter_add": "eager raises on an out-of-range index; an nvFuser scatter does not check",
    "index_put": "eager raises on an out-of-range index; an nvFuser scatter does not check",
    "flip": "nvFuser has no flip",
    "floor_divide": "nvFuser has no floor division matching Python's rounding",
    "digamma": "nvFuser has no digamma",
    "argmax": "nvFuser's argmax is not exposed in nvfuser_direct's ops",
    "argmin": "nvFuser's argmin is not exposed in nvfuser_direct's ops",
    "real": "complex tensors are left to PyTorch",
    "imag": "complex tensors are left to PyTorch",
    "item": "reading a value to the host ends the fusion; PyTorch does it",
    "device_put": "a copy between devices is PyTorch's",
    "copy_": "a general copy (its source may still be read) stays an eager copy; copy_to_out_ is fused",
}


def _tensors(bsym) -> list[TensorProxy]:
    return [p for p in (*bsym.flat_proxy_args, *bsym.flat_proxy_outs) if isinstance(p, TensorProxy)]


def _tensor_problem(t: TensorProxy) -> str | None:
    if t.device.type != "cuda":
        return f"a {t.device.type} tensor: nvFuser runs on CUDA tensors"
    if t.dtype not in translate.DTYPES:
        return f"dtype {t.dtype}: nvFuser has no such type (it has {', '.join(str(d) for d in translate.DTYPES)})"
    return None


def _number_problem(bsym) -> str | None:
    for a in bsym.flat_args:
        if isinstance(pyval(a) if isinstance(a, NumberProxy) else a, complex):
            return "a complex number"
    return None


def _slice_problem(bsym) -> str | None:
    strides = bsym.args[3] if len(bsym.args) > 3 else bsym.kwargs.get("strides")
    if strides is not None and any(s != 1 for s in strides):
        return "a strided slice: nvFuser slices with stride 1 only"
    return None


def _reduction_problem(bsym) -> str | None:
    if not tuple(bsym.args[1]):
        return "a reduction over no dimension (an identity)"
    return None


def _always(bsym) -> str | None:
    return None


# prim name -> checker(bsym) returning the reason it is refused, or None (on top of the tensor and number checks)
CHECKERS = {
    **{name: _always for name in translate.TRANSLATIONS},
    "slice": _slice_problem,
    **{name: _reduction_problem for name in translate.REDUCTIONS},
}


def why_not(bsym) -> str | None:
    """Why the nvFuser executor does not claim the prim ``bsym`` (None: it does)."""
    name = prim_name(bsym)
    if name is None:
        return f"{bsym.sym.id} is not a prim (its decomposition is claimed when every prim of it is)"
    if name in LEFT_TO_OTHERS:
        return LEFT_TO_OTHERS[name]
    checker = CHECKERS.get(name)
    if checker is None:
        return f"prims.{name} has no nvFuser translation"
    tensors = _tensors(bsym)
    if not tensors:
        return "no tensor: number arithmetic runs in Python"
    for t in tensors:
        problem = _tensor_problem(t)
        if problem is not None:
            return problem
    return _number_problem(bsym) or checker(bsym)


def claimable_prim(bsym) -> bool:
    return why_not(bsym) is None
