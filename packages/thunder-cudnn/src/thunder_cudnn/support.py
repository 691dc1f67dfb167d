"""Which attention calls the cudnn executor takes, and why not the others: a sequence of rules, each a check with
the reason it gives, evaluated on proxies (while tracing) or tensors (``thunder_cudnn.why_not``).

Head-dimension limits depend on cuDNN's version and the device (``HEAD_DIM_LIMITS``); where a device is present the
executor also builds the cuDNN graph before claiming, so cuDNN's own support check has the last word.
"""

from __future__ import annotations

from thunder.core import dtypes
from thunder.core.proxies import NumberProxy, pyval
from thunder_cudnn.availability import Runtime

__all__ = ["why_not", "HEAD_DIM_LIMITS", "DTYPES", "RULES"]

DTYPES = (dtypes.float16, dtypes.bfloat16)

# (cuDNN version at least, capability at least) -> (largest head dim forward, backward); the last row that applies
# wins. Without a known runtime (CPU, tracing for another machine) the first row, the most conservative, applies.
HEAD_DIM_LIMITS = (
    ((90000, (8, 0)), (128, 128)),
    ((90500, (9, 0)), (256, 128)),  # Hopper: d up to 256 forward from cuDNN 9.5
    ((91000, (9, 0)), (256, 256)),  # and backward from cuDNN 9.10
)


def _dtype(t):
    return dtypes.to_dtype(t.dtype)


def _device_type(t) -> str:
    return t.device.type


def head_dim_limits(rt: Runtime) -> tuple[int, int]:
    found = HEAD_DIM_LIMITS[0][1]
    for (version, capability), limits in HEAD_DIM_LIMITS:
        if rt.cudnn_version is not None and rt.capability is not None and rt.cudnn_version >= version and \
                tuple(rt.capability) >= capability:
            found = limits
    return found


def _shape(t) -> tuple:
    # the traced values of symbolic sizes, read without recording a constraint: a new sequence length must reuse
    # the trace (the graph for it is built when it runs)
    return tuple(pyval(d) if isinstance(d, NumberProxy) else int(d) for d in t.shape)


def _mask_broadcasts(mask, b, h, lq, lk) -> bool:
    shape = (1,) * (4 - mask.ndim) + _shape(mask)
    return mask.ndim <= 4 and all(m in (1, full) for m, full in zip(shape, (b, h, lq, lk)))


class _Call:
    """The attention call's arguments, as the rules read them."""

    def __init__(self, q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa, backward, rt):
        self.q, self.k, self.v, self.mask = q, k, v, attn_mask
        self.dropout_p, self.is_causal, self.scale, self.enable_gqa = dropout_p, is_causal, scale, enable_gqa
        self.backward, self.rt = backward, rt


def _four_d(c):
    if not (c.q.ndim == c.k.ndim == c.v.ndim == 4):
        return "query, key and value must be 4-D (batch, heads, sequence, head dim) for cuDNN's fused attention"


def _cuda(c):
    tensors = [t for t in (c.q, c.k, c.v, c.mask) if t is not None]
    if any(_device_type(t) != "cuda" for t in tensors):
        return "cuDNN runs on CUDA tensors"


def _dtypes_ok(c):
    if not (_dtype(c.q) is _dtype(c.k) is _dtype(c.v)):
        return "query, key and value have different dtypes"
    if _dtype(c.q) not in DTYPES:
        return f"dtype {_dtype(c.q)}: cuDNN's fused attention computes in float16 or bfloat16 only"


def _shapes_ok(c):
    (b, hq, lq, d), (bk, hk, lk, dk), (bv, hv, lv, _) = _shape(c.q), _shape(c.k), _shape(c.v)
    if not (b == bk == bv and hk == hv and lk == lv and d == dk):
        return "the shapes of query, key and value do not match (eager raises; thunder's decomposition says why)"
    if lq == 0 or lk == 0 or b == 0:
        return "an empty sequence or batch"
    if hq != hk and not (c.enable_gqa and hq % hk == 0):
        return "fewer key/value heads than query heads without enable_gqa=True (eager raises)"


def _head_dims(c):
    d, dv = _shape(c.q)[-1], _shape(c.v)[-1]
    if d % 8 or dv % 8:
        return f"head dims {d} and {dv}: cuDNN needs multiples of 8"
    forward, backward = head_dim_limits(c.rt)
    limit, what = (backward, "backward") if c.backward else (forward, "forward")
    if max(d, dv) > limit:
        return f"head dim {max(d, dv)} is above {limit}, the largest cuDNN's {what} takes on this device and version"


def _mask_ok(c):
    m = c.mask
    if m is None:
        return None
    if c.is_causal:
        return "both attn_mask and is_causal=True (eager's fused kernels refuse it)"
    if _dtype(m) is not dtypes.bool8 and _dtype(m) is not _dtype(c.q):
        return f"a float mask of dtype {_dtype(m)} with {_dtype(c.q)} inputs (eager's fused kernels want the query's)"
    if getattr(m, "requires_grad", False):
        return "a mask that requires grad: cuDNN's backward here does not compute the mask's gradient"
    b, hq, lq, _ = _shape(c.q)
    if not _mask_broadcasts(m, b, hq, lq, _shape(c.k)[-2]):
        return f"a mask of shape {_shape(m)} that does not broadcast to {(b, hq, lq, _shape(c.k)[-2])}"


def _dropout_ok(c):
    if c.dropout_p:
        return ("dropout: cuDNN's Philox stream would draw other masks than PyTorch's generator, and thunder keeps "
                "eager's numbers for a given seed")


# in order: the first rule that refuses gives the reason
RULES = (_cuda, _four_d, _dtypes_ok, _shapes_ok, _head_dims, _mask_ok, _dropout_ok)


def why_not(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, *,
            backward=False, runtime: Runtime = Runtime()) -> str | None:
    """The reason the cudnn executor leaves this call to the next executor, or None when it takes it."""
    c = _Call(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, backward, runtime)
    for rule in RULES:
        reason = rule(c)
        if reason is not None:
            return reason
    return None
