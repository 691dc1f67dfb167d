"""Autocast as explicit casts: what ``torch.autocast`` does to each torch-language symbol, per device type.

Under autocast PyTorch casts the floating arguments of some ops before running them (in its dispatcher,
``aten/src/ATen/autocast_mode.{h,cpp}``). Thunder records those casts in the trace instead, as
``ltorch.to`` (``prims.convert_element_type``) before the op, so the trace says which dtypes run, every
executor sees plain ops, and gradients follow the casts (a conversion's gradient converts back).

``POLICIES[device_type][symbol id]`` is the op's policy; the lists reproduce PyTorch 2.x's behaviour:
- "lower_precision_fp": cast floating arguments to the autocast dtype (matmul, linear, conv, attention);
- "fp32": cast floating arguments to float32 (numerically sensitive ops: losses, norms on CUDA, exp/log/pow
  on CUDA, linear algebra on CPU);
- "fp32_set_opt_dtype": float32 unless the call names an output dtype; the first argument decides (softmax,
  log_softmax, sum, cumsum, prod on CUDA);
- "promote": the widest floating dtype among the arguments, float32 over the autocast dtype (cat, stack on
  CPU; addcmul, atan2, scatter_add on CUDA).
An argument is *eligible* when it is a floating tensor on the autocast's device type and not float64
(PyTorch never casts float64). Ops PyTorch implements by composing listed ops (``einsum``, ``cross_entropy``
on CUDA) are listed with the policy their composition has, since the torch executor runs them whole.
Ids cover both the language's symbol (``ltorch.linear``) and the opaque fallback of the same torch
callable (``ltorch.opaque.torch.conv2d``), so ops without a symbol yet get eager's dtypes too.
"""

from __future__ import annotations

import inspect

from thunder.core import dtypes
from thunder.core.errors import check
from thunder.core.proxies import TensorProxy

__all__ = ["POLICIES", "DEVICE_TYPES", "autocast_arguments"]

LOWER, FP32, FP32_SET_OPT_DTYPE, PROMOTE = "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "promote"

# device types whose autocast thunder reproduces (others leave the program unchanged)
DEVICE_TYPES = ("cpu", "cuda")

# PyTorch's AutocastCPU registrations, plus composites that reach them (einsum -> bmm)
_CPU = {
    LOWER: ("conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm", "linear",
            "matmul", "rmatmul", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu",
            "scaled_dot_product_attention", "scaled_dot_product_attention_dropout", "einsum", "tensordot", "chain_matmul"),
    FP32: ("avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile", "nanquantile", "stft",
           "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse", "cholesky_solve", "inverse",
           "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d", "max_unpool2d", "max_unpool3d",
           "adaptive_avg_pool3d", "mse_loss", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss",
           "poisson_nll_loss", "smooth_l1_loss", "cross_entropy", "l1_loss", "huber_loss", "margin_ranking_loss",
           "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
           "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft", "fft_fft2",
           "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn",
           "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_matrix_rank", "linalg_solve",
           "linalg_cholesky", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
           "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve", "geqrf", "qr", "svd",
           "triangular_solve", "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d", "linalg_qr",
           "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq", "linalg_inv_ex"),
    PROMOTE: ("stack", "cat", "index_copy"),
}

# PyTorch's AutocastCUDA registrations (AT_FORALL_* lists), plus composites that reach them
_CUDA = {
    LOWER: ("conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
            "convolution", "prelu", "addmm", "addmv", "addr", "matmul", "rmatmul", "einsum", "mm", "mv",
            "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul", "linalg_multi_dot", "lstm_cell",
            "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "scaled_dot_product_attention",
            "scaled_dot_product_attention_dropout"),
    FP32: ("acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
           "sinh", "tan", "pow", "rpow", "softplus", "layer_norm", "rms_norm", "group_norm", "cosine_similarity",
           "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "kl_div", "l1_loss",
           "smooth_l1_loss", "huber_loss", "mse_loss", "margin_ranking_loss", "multilabel_margin_loss",
           "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "binary_cross_entropy_with_logits",
           "dist", "pdist", "cdist", "renorm", "logsumexp", "upsample_nearest1d", "upsample_nearest2d",
           "upsample_nearest3d", "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d",
           "upsample_bicubic2d", "norm",
           # log_softmax then nll_loss, both float32
           "cross_entropy"),
    FP32_SET_OPT_DTYPE: ("prod", "softmax", "log_softmax", "cumprod", "cumsum", "linalg_vector_norm",
                         "linalg_matrix_norm", "sum"),
    PROMOTE: ("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler", "index_put",
              "tensordot", "scatter_add"),
}

# where a torch op of that name lives, for the ids of its opaque fallback
_TORCH_NAMESPACES = ("torch", "torch.nn.functional", "torch.Tensor", "torch.linalg", "torch.fft", "torch.special")


def _ids(name: str) -> list[str]:
    from thunder.torch.opaque import OPAQUE_ID_PREFIX

    fft_or_linalg = {"fft_": "torch.fft.", "linalg_": "torch.linalg."}
    ids = [f"ltorch.{name}"] + [f"{OPAQUE_ID_PREFIX}{ns}.{name}" for ns in _TORCH_NAMESPACES]
    for prefix, namespace in fft_or_linalg.items():
        if name.startswith(prefix):
            ids.append(f"{OPAQUE_ID_PREFIX}{namespace}{name[len(prefix):]}")
    return ids


def _table(lists: dict) -> dict[str, str]:
    return {sym_id: policy for policy, names in lists.items() for name in names for sym_id in _ids(name)}


POLICIES: dict[str, dict[str, str]] = {"cpu": _table(_CPU), "cuda": _table(_CUDA)}
POLICY_IDS = frozenset(sym_id for table in POLICIES.values() for sym_id in table)


def _eligible(x, device_type: str) -> bool:
    return (isinstance(x, TensorProxy) and x.device.type == device_type and dtypes.is_float_dtype(x.dtype)
            and x.dtype is not dtypes.float64)


def _map_tensors(args, kwargs, fn):
    """Applies ``fn`` to every tensor argument, in lists and tuples too (cat, stack)."""
    def one(x):
        if isinstance(x, (list, tuple)):
            return type(x)(one(v) for v in x)
        return fn(x) if isinstance(x, TensorProxy) else x

    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _tensors(args, kwargs) -> list:
    found: list = []
    _map_tensors(args, kwargs, found.append)
    return found


def _cast_eligible(args, kwargs, device_type, to):
    from thunder.torch.conversions import to as convert

    def cast(x):
        return convert(x, dtype=to) if _eligible(x, device_type) and x.dtype is not to else x

    return _map_tensors(args, kwargs, cast)


def _lower(sym, args, kwargs, device_type, lower):
    return _cast_eligible(args, kwargs, device_type, lower)


def _fp32(sym, args, kwargs, device_type, lower):
    return _cast_eligible(args, kwargs, device_type, dtypes.float32)


def _fp32_set_opt_dtype(sym, args, kwargs, device_type, lower):
    # an explicit output dtype wins; otherwise the op runs in float32 when its first argument is eligible
    tensors = _tensors(args, kwargs)
    if not tensors or not _eligible(tensors[0], device_type) or _names_dtype(sym, args, kwargs):
        return args, kwargs
    return _cast_eligible(args, kwargs, device_type, dtypes.float32)


def _names_dtype(sym, args, kwargs) -> bool:
    if kwargs.get("dtype") is not None:
        return True
    try:
        bound = inspect.signature(sym.meta).bind_partial(*args, **kwargs)
    except (TypeError, ValueError):
        return False
    return bound.arguments.get("dtype") is not None


def _promote(sym, args, kwargs, device_type, lower):
    to = lower
    for x in _tensors(args, kwargs):
        if not _eligible(x, device_type):
            continue
        # float32 wins over the autocast dtype; another low-precision dtype is an error, as in PyTorch
        check(x.dtype in (dtypes.float32, lower) or to is dtypes.float32,
              lambda: f"autocast: {sym.name} got a {x.dtype} tensor under autocast to {lower}, which PyTorch refuses "
              "(\"Unexpected floating ScalarType in at::autocast::prioritize\")", RuntimeError)
        if x.dtype is dtypes.float32:
            to = dtypes.float32
    return _cast_eligible(args, kwargs, device_type, to)


_CASTS = {LOWER: _lower, FP32: _fp32, FP32_SET_OPT_DTYPE: _fp32_set_opt_dtype, PROMOTE: _promote}


def _device_type(args, kwargs) -> str | None:
    """The autocast that applies is the one of the op's device: CUDA when any tensor argument is on CUDA."""
    types = {x.device.type for x in _tensors(args, kwargs)}
    return "cuda" if "cuda" in types else next(iter(types), None)


def autocast_arguments(sym, args, kwargs, state: dict):
    """The arguments ``sym`` runs with under autocast ``state`` ({device type: thunder dtype} of the enabled
    autocasts), casts recorded in the current trace; the arguments themselves when nothing applies."""
    device_type = _device_type(args, kwargs)
    lower = state.get(device_type)
    if lower is None:
        return args, kwargs
    policy = POLICIES[device_type].get(sym.id)
    if policy is None:
        return args, kwargs
    return _CASTS[policy](sym, args, kwargs, device_type, lower)
