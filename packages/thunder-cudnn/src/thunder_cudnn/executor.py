"""The ``cudnn`` operator executor: claims ``scaled_dot_product_attention`` where cuDNN supports the call
(``support``), runs it through the cuDNN frontend (``runtime``), and registers a gradient rule whose forward saves
the softmax statistics and whose backward is cuDNN's.

Its symbols print as ``thunder_cudnn.runtime.sdpa_forward(q, k, v, attn_mask, is_causal, scale)``: importable
calls, so printed traces run as they read.
"""

from __future__ import annotations

import math

from thunder import torch as ltorch
from thunder.core import dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.symbol import Symbol
from thunder.extend import OperatorExecutor
from thunder_cudnn import availability, support

__all__ = ["CudnnExecutor", "ex", "sdpa_forward", "sdpa_forward_with_stats", "sdpa_backward"]


# the attention symbols of the torch language: without dropout, and with (thunder.torch.randomness's)
_ATTENTION = ("ltorch.scaled_dot_product_attention", "ltorch.scaled_dot_product_attention_dropout")


class CudnnExecutor(OperatorExecutor):
    def availability(self) -> tuple[bool, str]:
        return availability.availability()

    def why_not(self, bsym) -> str | None:
        """The decision table's reason for an attention call (``thunder.examine.claims(jfn, "cudnn")``)."""
        if bsym.sym.id not in _ATTENTION:
            return super().why_not(bsym)
        return _reason(*bsym.args, backward=False, **bsym.kwargs)


def _frontend_version() -> str | None:
    try:
        from importlib.metadata import version

        return f"nvidia-cudnn-frontend {version('nvidia-cudnn-frontend')}"
    except Exception:
        return None


# above nvFuser (60) and Triton (50): attention is claimed whole before any fusion executor looks at it
ex = CudnnExecutor("cudnn", priority=70, version=_frontend_version())


def _out(query, key, value) -> TensorProxy:
    return TensorProxy(shape=(*query.shape[:-1], value.shape[-1]), dtype=query.dtype, device=query.device,
                       requires_grad=query.requires_grad or key.requires_grad or value.requires_grad)


def _forward_meta(query, key, value, attn_mask, is_causal, scale):
    return _out(query, key, value)


def _forward_with_stats_meta(query, key, value, attn_mask, is_causal, scale):
    stats = TensorProxy(shape=(*query.shape[:-1], 1), dtype=dtypes.float32, device=query.device)
    return _out(query, key, value), stats


def _backward_meta(grad_out, query, key, value, out, softmax_stats, attn_mask, is_causal, scale):
    return tuple(TensorProxy(shape=t.shape, dtype=t.dtype, device=t.device) for t in (query, key, value))


def _symbol(name: str, meta) -> Symbol:
    sym = Symbol(name, meta, id=f"cudnn.{name}", is_prim=True, module="thunder_cudnn.runtime", executor=ex)
    ex.register_implementation(sym.id, sym)  # the symbol is its own implementation: a call of the runtime
    return sym


sdpa_forward = _symbol("sdpa_forward", _forward_meta)
sdpa_forward_with_stats = _symbol("sdpa_forward_with_stats", _forward_with_stats_meta)
sdpa_backward = _symbol("sdpa_backward", _backward_meta)


# ---------------------------------------------------------------------------------------------
# Claiming
# ---------------------------------------------------------------------------------------------


def _device_verdict(query, key, value, attn_mask, is_causal, scale, backward) -> str | None:
    """cuDNN's own check, where a device is present: the graphs of this call's shapes build."""
    if not availability.availability()[0]:
        return None
    from thunder_cudnn import runtime

    shapes = [support._shape(t) for t in (query, key, value)]
    mask_shape = None if attn_mask is None else support._shape(attn_mask)
    mask_dtype = None if attn_mask is None else dtypes.to_torch_dtype(attn_mask.dtype)
    return runtime.check_support(shapes, dtypes.to_torch_dtype(query.dtype), mask_shape, mask_dtype, is_causal,
                                 _scale_value(query, scale), backward)


def _scale_value(query, scale):
    return 1.0 / math.sqrt(support._shape(query)[-1]) if scale is None else scale


def _reason(*args, backward: bool, **kwargs) -> str | None:
    """Why cuDNN does not take this attention call: the decision table, then (with a device) cuDNN itself."""
    bound = _bind(*args, **kwargs)
    reason = support.why_not(*bound, backward=backward, runtime=availability.runtime())
    if reason is None:
        q, k, v, mask, _, is_causal, scale, _ = bound
        reason = _device_verdict(q, k, v, mask, is_causal, scale, backward)
    return reason


def _accepts(*args, backward: bool, **kwargs) -> bool:
    return _reason(*args, backward=backward, **kwargs) is None


def _bind(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    return query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa


def _forward_ok(*args, **kwargs) -> bool:
    return _accepts(*args, backward=False, **kwargs)


def _forward_and_backward_ok(*args, **kwargs) -> bool:
    return _accepts(*args, backward=True, **kwargs)


# ---------------------------------------------------------------------------------------------
# Lowering and the gradient rule
# ---------------------------------------------------------------------------------------------


def _attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    return sdpa_forward(query, key, value, attn_mask, is_causal, scale)


def _attention_grad(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    out, softmax_stats = sdpa_forward_with_stats(query, key, value, attn_mask, is_causal, scale)

    def backward(g):
        gq, gk, gv = sdpa_backward(g, query, key, value, out, softmax_stats, attn_mask, is_causal, scale)
        return {"query": gq, "key": gk, "value": gv}

    return out, backward


ex.register_implementation(ltorch.scaled_dot_product_attention, execution_transform=_attention, checker=_forward_ok)
ex.register_grad_rule(ltorch.scaled_dot_product_attention, _attention_grad, checker=_forward_and_backward_ok)
