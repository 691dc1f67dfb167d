"""The torch executor: runs symbols with PyTorch eager. It is the fallback that can run everything.

Two tables: torch-language symbols run as the one torch call they stand for (``ltorch.softmax`` ->
``torch.softmax``), which is fastest; prims run through small implementations, so any decomposition
can run as well. Both are keyed by symbol id.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes
from thunder.core.devices import Device
from thunder.core.proxies import TensorProxy
from thunder.core.pytree import tree_map
from thunder.extend import OperatorExecutor
from thunder.plugins import hookimpl


class TorchExecutor(OperatorExecutor):
    def translate_args(self, args, kwargs):
        return tree_map(_to_torch, args), tree_map(_to_torch, kwargs)

    def after_dispatch(self, trace):
        from thunder.executors.torch_copies import fold_copies_into_out, reuse_dead_temporaries
        from thunder.executors.torch_schedule import run_chains_one_by_one
        from thunder.executors.torch_stores import scatter_into_fresh_in_place, store_updates_in_place

        trace = run_chains_one_by_one(reuse_dead_temporaries(fold_copies_into_out(trace)), self)
        trace = scatter_into_fresh_in_place(trace)
        # last: an in-place store has no output, so a reordering after it would not see the reads it must precede
        return store_updates_in_place(trace)


def _to_torch(x):
    if isinstance(x, dtypes.dtype):
        return dtypes.to_torch_dtype(x)
    if isinstance(x, Device):
        return x.to_torch()
    return x


ex = TorchExecutor("torch", priority=0, version=torch.__version__)


def _has_tensor(*args, **kwargs) -> bool:
    from thunder.core.pytree import tree_flatten

    return any(isinstance(a, TensorProxy) for a in tree_flatten((args, kwargs))[0])


def register(sym_id: str, path: str, *, checker=None) -> None:
    """``sym_id`` runs as a call to the importable ``path`` with the same arguments."""
    ex.register_implementation(sym_id, ex.register_operator(path), checker=checker)


# ---------------------------------------------------------------------------------------------
# Prims
# ---------------------------------------------------------------------------------------------

# Elementwise prims and torch-language symbols of the same name are the same torch function.
ELEMENTWISE = {
    "abs": "torch.abs", "neg": "torch.neg", "exp": "torch.exp", "exp2": "torch.exp2", "expm1": "torch.expm1",
    "log": "torch.log", "log1p": "torch.log1p", "log2": "torch.log2", "log10": "torch.log10", "sin": "torch.sin",
    "cos": "torch.cos", "tan": "torch.tan", "asin": "torch.asin", "acos": "torch.acos", "atan": "torch.atan",
    "sinh": "torch.sinh", "cosh": "torch.cosh", "tanh": "torch.tanh", "asinh": "torch.asinh", "acosh": "torch.acosh",
    "atanh": "torch.atanh", "sqrt": "torch.sqrt", "rsqrt": "torch.rsqrt", "erf": "torch.erf", "erfc": "torch.erfc",
    "erfinv": "torch.erfinv", "lgamma": "torch.lgamma", "digamma": "torch.digamma", "floor": "torch.floor",
    "ceil": "torch.ceil", "round": "torch.round", "trunc": "torch.trunc", "sign": "torch.sign",
    "signbit": "torch.signbit", "reciprocal": "torch.reciprocal", "logical_not": "torch.logical_not",
    "bitwise_not": "torch.bitwise_not", "isfinite": "torch.isfinite", "isnan": "torch.isnan", "isinf": "torch.isinf",
    "real": "torch.real", "imag": "torch.imag",
    "add": "torch.add", "sub": "torch.sub", "mul": "torch.mul", "floor_divide": "torch.floor_divide",
    "fmod": "torch.fmod", "remainder": "torch.remainder", "pow": "torch.pow", "maximum": "torch.maximum",
    "minimum": "torch.minimum", "atan2": "torch.atan2", "eq": "torch.eq", "ne": "torch.ne", "lt": "torch.lt",
    "le": "torch.le", "gt": "torch.gt", "ge": "torch.ge", "bitwise_and": "torch.bitwise_and",
    "bitwise_or": "torch.bitwise_or", "bitwise_xor": "torch.bitwise_xor",
    "shift_left": "torch.bitwise_left_shift", "shift_right": "torch.bitwise_right_shift", "where": "torch.where",
}
# prims.div rounds integer quotients toward zero; ltorch.div has torch.div's signature
_ELEMENTWISE_PRIMS = {**ELEMENTWISE, "div": "thunder.executors.torch_impls.div"}
for _name, _path in _ELEMENTWISE_PRIMS.items():
    register(f"prims.{_name}", _path, checker=_has_tensor)

_OTHER_PRIMS = {
    "convert_element_type": "thunder.executors.torch_impls.convert_element_type",
    "full": "thunder.executors.torch_impls.full",
    "iota": "thunder.executors.torch_impls.iota",
    "uniform": "thunder.executors.torch_impls.uniform",
    "device_put": "thunder.executors.torch_impls.device_put",
    "broadcast_in_dim": "thunder.executors.torch_impls.broadcast_in_dim",
    "reshape": "torch.reshape",
    "transpose": "torch.permute",
    "slice": "thunder.executors.torch_impls.slice_prim",
    "squeeze": "thunder.executors.torch_impls.squeeze",
    "cat": "torch.cat",
    "flip": "torch.flip",
    "take": "thunder.executors.torch_impls.take",
    "take_along_axis": "thunder.executors.torch_impls.take_along_axis",
    "index": "thunder.executors.torch_impls.index",
    "index_add": "torch.index_add",
    "scatter_add": "torch.scatter_add",
    "index_put": "thunder.executors.torch_impls.index_put",
    "sum": "thunder.executors.torch_impls.sum_prim",
    "prod": "thunder.executors.torch_impls.prod_prim",
    "amax": "torch.amax",
    "amin": "torch.amin",
    "var": "thunder.executors.torch_impls.var_prim",
    "argmax": "torch.argmax",
    "argmin": "torch.argmin",
    "matmul": "torch.matmul",
    "linear": "torch.nn.functional.linear",
}
for _name, _path in _OTHER_PRIMS.items():
    register(f"prims.{_name}", _path, checker=_has_tensor if _name == "convert_element_type" else None)


# ---------------------------------------------------------------------------------------------
# Torch-language symbols that are one torch call
# ---------------------------------------------------------------------------------------------
# ltorch name -> importable torch path taking the same arguments
DIRECT = {
    **ELEMENTWISE, "div": "torch.div", "sigmoid": "torch.sigmoid", "clamp": "torch.clamp",
    # shape ops (Tensor methods where torch.X lacks the varargs form)
    "reshape": "torch.Tensor.reshape", "view_as": "torch.Tensor.reshape_as", "reshape_as": "torch.Tensor.reshape_as",
    "contiguous": "torch.Tensor.contiguous",
    # view runs as reshape: traces have no strides (contiguous() is the identity), so a view of a transposed
    # tensor must be allowed to copy
    "view": "torch.Tensor.reshape",
    "flatten": "torch.flatten", "unflatten": "torch.unflatten", "permute": "torch.Tensor.permute",
    "transpose": "torch.transpose", "t": "torch.t", "unsqueeze": "torch.unsqueeze", "squeeze": "torch.squeeze",
    "expand": "torch.Tensor.expand", "expand_as": "torch.Tensor.expand_as", "broadcast_to": "torch.broadcast_to",
    "split": "torch.split", "chunk": "torch.chunk", "tensor_split": "torch.tensor_split", "cat": "torch.cat",
    "stack": "torch.stack", "movedim": "torch.movedim",
    # indexing
    "getitem": "torch.Tensor.__getitem__", "index_select": "torch.index_select", "gather": "torch.gather",
    "take_along_dim": "torch.take_along_dim", "masked_fill": "torch.masked_fill", "tril": "torch.tril",
    "triu": "torch.triu",
    # data-dependent sizes, read before the op (torch/data_dependent.py)
    "nonzero_static": "torch.nonzero_static", "nonzero_sized": "thunder.executors.torch_impls.nonzero_sized",
    "nonzero_counted": "thunder.executors.torch_impls.nonzero_counted",
    "unique_sized": "thunder.executors.torch_impls.unique_sized",
    "unique_consecutive_sized": "thunder.executors.torch_impls.unique_consecutive_sized",
    "bincount_sized": "thunder.executors.torch_impls.bincount_sized", "one_hot": "torch.nn.functional.one_hot",
    "embedding_renorm": "thunder.executors.torch_impls.embedding_renorm",
    # reductions
    "sum": "torch.sum", "prod": "torch.prod", "mean": "torch.mean", "amax": "torch.amax", "amin": "torch.amin",
    "argmax": "torch.argmax", "argmin": "torch.argmin", "max": "torch.max", "min": "torch.min", "var": "torch.var",
    "std": "torch.std", "var_mean": "torch.var_mean", "std_mean": "torch.std_mean", "any": "torch.any",
    "all": "torch.all",
    # linear algebra
    "matmul": "torch.matmul", "rmatmul": "torch.Tensor.__rmatmul__", "mm": "torch.mm", "bmm": "torch.bmm",
    "baddbmm": "torch.baddbmm", "addmm": "torch.addmm", "linear": "torch.nn.functional.linear", "outer": "torch.outer",
    # torch.nn.functional
    "relu": "torch.relu", "gelu": "torch.nn.functional.gelu", "silu": "torch.nn.functional.silu",
    "softmax": "torch.softmax", "log_softmax": "torch.log_softmax", "layer_norm": "torch.nn.functional.layer_norm",
    "rms_norm": "torch.nn.functional.rms_norm", "embedding": "torch.nn.functional.embedding",
    "scaled_dot_product_attention": "torch.nn.functional.scaled_dot_product_attention",
    "cross_entropy": "torch.nn.functional.cross_entropy",
    # conversions
    "to": "torch.Tensor.to",
}
# Creation ops take no tensor, so they are claimed whatever their arguments. (empty/empty_like are not here:
# they decompose to full, keeping traces deterministic.)
DIRECT_CREATION = {
    "zeros": "torch.zeros", "ones": "torch.ones", "full": "torch.full", "arange": "torch.arange",
    "zeros_like": "torch.zeros_like", "ones_like": "torch.ones_like", "full_like": "torch.full_like",
    "tensor": "torch.tensor", "linspace": "torch.linspace", "logspace": "torch.logspace", "eye": "torch.eye",
}


# Random symbols run as the very same torch call (same seed, same numbers, same generator state after); their
# executor symbols keep the random/side_effect tags so the passes after dispatch neither merge nor drop them.
DIRECT_RANDOM = {
    "rand": "torch.rand", "randn": "torch.randn", "randint": "torch.randint", "randperm": "torch.randperm",
    "rand_like": "torch.rand_like", "randn_like": "torch.randn_like", "randint_like": "torch.randint_like",
    "bernoulli": "torch.bernoulli", "multinomial": "torch.multinomial", "normal": "torch.normal",
    "poisson": "torch.poisson", "dropout": "torch.nn.functional.dropout",
    "scaled_dot_product_attention_dropout": "torch.nn.functional.scaled_dot_product_attention",
    "random_fill_like": "thunder.executors.torch_impls.random_fill_like",
}


def _register_direct() -> None:
    from thunder.torch.registry import language_symbols

    for name, path in DIRECT.items():
        if name in language_symbols:
            register(f"ltorch.{name}", path, checker=_has_tensor)
    for name, path in DIRECT_CREATION.items():
        if name in language_symbols:
            register(f"ltorch.{name}", path)
    for name, path in DIRECT_RANDOM.items():
        sym = language_symbols.get(name)
        if sym is not None:
            op = ex.register_operator(path)
            op.tags = sym.tags
            ex.register_implementation(sym.id, op)


def _register_opaque(sym, fn, path) -> None:
    """An opaque symbol (a torch op with no torch-language symbol) runs as the torch callable itself."""
    if path is not None:
        try:
            op = ex.register_operator(path)
        except ValueError:
            path = None
    if path is None:
        op = ex.register_operator(sym.id[len("ltorch.opaque."):], fn, call_ctx=True)
    op.tags = sym.tags  # random ops stay unmerged and undropped after dispatch too
    op.id = f"{ex.name}.opaque.{sym.id[len('ltorch.opaque.'):]}"  # final traces still tell fallback calls apart
    ex.register_implementation(sym.id, op)


@hookimpl
def thunder_executors():
    from thunder.torch.opaque import on_new_opaque_symbol

    _register_direct()
    on_new_opaque_symbol(_register_opaque)
    return [ex]


# In-place support: the out-of-place forms in-place code decomposes to, and the copy lowering.
IN_PLACE_SUPPORT = {
    "clone": "torch.clone", "index_copy": "torch.index_copy", "index_add": "torch.index_add",
    "scatter": "torch.scatter", "scatter_add": "torch.scatter_add", "lerp": "torch.lerp", "addcmul": "torch.addcmul",
    "addcdiv": "torch.addcdiv", "setitem": "thunder.executors.torch_impls.setitem", "diff": "torch.diff",
    "cumsum": "torch.cumsum", "pad": "torch.nn.functional.pad", "detach": "torch.Tensor.detach",
    "data": "torch.Tensor.detach",
    "diagonal": "torch.diagonal", "as_strided": "torch.as_strided", "diagonal_scatter": "torch.diagonal_scatter",
    "as_strided_scatter": "torch.as_strided_scatter", "select": "torch.select", "narrow": "torch.narrow",
}


@hookimpl
def thunder_register_implementations(get_executor):
    from thunder.torch.registry import language_symbols

    for name, path in IN_PLACE_SUPPORT.items():
        if name in language_symbols:
            register(f"ltorch.{name}", path, checker=_has_tensor)
    from thunder.executors import torch_grad

    torch_grad.register(ex)  # eager's backward kernels, through the API every executor uses
    if torch.distributed.is_available():  # the collectives' symbols, registered with the executor (import: ~70 ms)
        from thunder.distributed import collectives, fsdp_backward_prefetch, fsdp_gather, fsdp_gradients, gradient_buckets

        implementations = (collectives.IMPLEMENTATIONS | fsdp_gather.IMPLEMENTATIONS | fsdp_gradients.IMPLEMENTATIONS
                           | fsdp_backward_prefetch.IMPLEMENTATIONS | gradient_buckets.IMPLEMENTATIONS)
        for sym, path in implementations.items():
            register(sym.id, path)
    register("prims.item", "torch.Tensor.item")
    register("read_guard", "thunder.frontend.size_guards.check_read")  # a size read inside a segment
    register("prims.set_grad_enabled", "torch._C._set_grad_enabled")
    register("prims.update_without_grad", "thunder.executors.torch_impls.update_without_grad")
    register("prims.derivative_not_implemented", "thunder.executors.torch_impls.derivative_not_implemented")
    register("prims.raise_in_backward", "thunder.executors.torch_impls.raise_in_backward")
    register("prims.tensor_version", "thunder.executors.torch_impls.tensor_version")
    register("prims.manual_seed", "torch.manual_seed")
    register("prims.get_rng_state", "thunder.executors.torch_impls.get_rng_state")
    register("prims.set_rng_state", "torch.set_rng_state")


@hookimpl
def thunder_register_copy_lowering(get_executor):
    copy = ex.register_operator("thunder.executors.torch_impls.copy_to_out_")
    ex.register_copy_lowering(copy_to_out=copy, copy=copy)
