"""Which bound symbols the Inductor executor claims: a table keyed by prim name.

Inductor fuses anything pointwise, broadcasts, views, dtype conversions and reductions, so every such prim is
claimed. A torch-language symbol (``softmax``, ``layer_norm``, ``gelu``, ``cross_entropy``'s pieces) is claimed
when every prim of its decomposition is: Inductor then sees the decomposed form and fuses it with its
neighbours, which is what beats one eager kernel per op.

Matmuls and attention are claimed too, though Inductor runs them as the same extern ATen kernels eager calls: a
region that ends at every matmul is one Inductor compile (a C++ compile on CPU) and one Python call per piece,
where a whole layer, or a whole forward or backward trace, is one. Attention is claimed whole (``WHOLE``): the
torch executor's flash-attention kernel and its gradient rule (its ATen backward, claimed in turn), never the
decomposed softmax(QK^T)V. Random numbers and indexing stay with the torch executor: their errors (an index out of
range) must read as eager's, which Inductor's bound checks do not.
Claimed prims are rebound to *claim symbols* (``inductor_claim_exp``): they mark what the fusion pass may
group, and are given back to the torch executor when they end up in no region worth compiling.
"""

from __future__ import annotations

from thunder.core import dtypes
from thunder.core.proxies import NumberProxy, TensorProxy, pyval
from thunder.extend.claiming import prim_name

__all__ = ["CLAIMED_PRIMS", "SHAPE_PRIMS", "NOT_WORTH_ALONE", "WHOLE", "claimable_prim", "claimable_whole", "storable"]

ELEMENTWISE = (
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "ceil", "cos", "cosh", "digamma", "div", "eq", "erf", "erfc", "erfinv", "exp",
    "exp2", "expm1", "floor", "floor_divide", "fmod", "ge", "gt", "isfinite", "isinf", "isnan", "le", "lgamma",
    "log", "log10", "log1p", "log2", "logical_not", "lt", "maximum", "minimum", "mul", "ne", "neg", "pow",
    "reciprocal", "remainder", "round", "rsqrt", "sign", "signbit", "sin", "sinh", "sqrt", "sub", "tan", "tanh",
    "trunc", "where",
)
REDUCTIONS = ("sum", "amax", "amin", "prod", "var")
# views and layout: Inductor folds them into the loads of the kernels that read them
SHAPE_PRIMS = ("broadcast_in_dim", "reshape", "transpose", "squeeze", "slice", "flip")
# a region of only these is not worth an Inductor compile and a call: PyTorch makes a view, or fills a tensor
# (the positions an embedding reads), as fast without one
NOT_WORTH_ALONE = (*SHAPE_PRIMS, "iota", "full")
CLAIMED_PRIMS = frozenset((*ELEMENTWISE, *REDUCTIONS, *SHAPE_PRIMS, "convert_element_type", "full", "iota",
                           "cat", "matmul", "linear"))

# claimed as one call, not decomposed: attention as the torch executor's kernels (its forward where the torch
# executor's gradient rule would pick the kernel, and the ATen backward symbols of thunder.executors.torch_grad)
WHOLE = frozenset((
    "ltorch.scaled_dot_product_attention",
    "aten._scaled_dot_product_flash_attention_for_cpu",
    "aten._scaled_dot_product_flash_attention_for_cpu_backward",
    "aten._scaled_dot_product_efficient_attention",
    "aten._scaled_dot_product_efficient_attention_backward",
    "aten._softmax_backward_data",
    "aten._log_softmax_backward_data",
))


def _tensor_ok(t: TensorProxy) -> bool:
    # Inductor generates C++ (CPU) or Triton (CUDA) kernels; complex numbers it hands back to eager anyway
    return t.device.type in ("cpu", "cuda") and not dtypes.is_complex_dtype(t.dtype)


def _number_ok(x) -> bool:
    return not isinstance(pyval(x) if isinstance(x, NumberProxy) else x, complex)


def _operands_ok(bsym) -> bool:
    """``bsym`` reads or makes a tensor, and every tensor and number it takes or gives is one Inductor compiles."""
    tensors = [p for p in (*bsym.flat_proxy_args, *bsym.flat_proxy_outs) if isinstance(p, TensorProxy)]
    return bool(tensors) and all(_tensor_ok(t) for t in tensors) and all(_number_ok(a) for a in bsym.flat_args)


def claimable_prim(bsym) -> bool:
    return prim_name(bsym) in CLAIMED_PRIMS and _operands_ok(bsym)


def claimable_whole(bsym, torch_ex) -> bool:
    """A ``WHOLE`` symbol on tensors Inductor compiles, where the torch executor runs it as its kernel (its
    gradient rule's checker, for a composite with one, accepts the arguments)."""
    if bsym.sym.id not in WHOLE or not torch_ex.can_execute(bsym):
        return False
    _, checker = torch_ex.grad_rules.get(bsym.sym.id, (None, None))
    return _operands_ok(bsym) and (checker is None or bool(checker(*bsym.args, **bsym.kwargs)))


def storable(bsym) -> bool:
    """An in-place ``index_copy_`` into a view of an input (``thunder.extend.regions.in_place_stores``) that a
    region may do: on CPU tensors, along a constant dim. Inductor checks the indices in its C++ loop and raises
    its own error (and wraps negative ones), so the region checks them first and runs its torch calls where one is
    out of range (``compile.IndexCheck``), which raise eager's ``IndexError``; a CUDA kernel could only assert, and a
    check on the host would wait for the device, so CUDA stores stay with the torch executor."""
    view, dim, index, source = bsym.args
    return (isinstance(dim, int) and all(isinstance(t, TensorProxy) and t.device.type == "cpu"
                                         for t in (view, index, source))
            and _operands_ok(bsym))
