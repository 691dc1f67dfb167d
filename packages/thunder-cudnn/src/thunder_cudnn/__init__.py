"""thunder-cudnn: scaled-dot-product attention on cuDNN's fused kernels (forward and backward) for thunder.

Installed, it registers the ``cudnn`` operator executor through thunder's plugin hooks; ``thunder.jit`` then runs
``torch.nn.functional.scaled_dot_product_attention`` calls cuDNN supports through the cuDNN frontend's graph API,
with a gradient rule whose forward saves the softmax statistics for cuDNN's backward. ``why_not(q, k, v, ...)`` says
why a call is left to the next executor. See docs/cudnn.md.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["executor", "why_not"]


def executor():
    """The ``cudnn`` executor object (also ``thunder.extend.get_executor("cudnn")``)."""
    from thunder_cudnn.executor import ex

    return ex


def why_not(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, *,
            backward=False) -> str | None:
    """Why the cudnn executor leaves this attention call (tensors or proxies) to the next executor, or None when it
    takes it (``backward=True``: the backward too). Asks the device's capability and cuDNN's version when present."""
    from thunder_cudnn import availability, support

    return support.why_not(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, backward=backward,
                           runtime=availability.runtime())
