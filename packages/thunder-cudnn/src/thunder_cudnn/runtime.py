"""Running attention on cuDNN: the calls printed in traces (``thunder_cudnn.runtime.sdpa_forward(...)``), and the
cuDNN frontend graphs behind them.

A graph is built once per key (shapes, strides and dtypes of every tensor, causal flag, scale, whether statistics
are produced, device) and cached, so a new sequence length under ``cache="symbolic values"`` builds (or finds) its
graph without retracing. Workspaces come from PyTorch's caching allocator; graphs run on PyTorch's current stream.
"""

from __future__ import annotations

import threading

import torch

__all__ = ["sdpa_forward", "sdpa_forward_with_stats", "sdpa_backward", "stats", "check_support"]

_lock = threading.Lock()
_graphs: dict = {}
_handles: dict = {}
_stats = {"graphs": 0, "hits": 0}


def stats() -> dict:
    """{'graphs': cuDNN graphs built in this process, 'hits': calls that reused one}."""
    return dict(_stats)


def _cudnn():
    import cudnn

    return cudnn


def _data_type(dtype: torch.dtype):
    cudnn = _cudnn()
    return {torch.float16: cudnn.data_type.HALF, torch.bfloat16: cudnn.data_type.BFLOAT16,
            torch.float32: cudnn.data_type.FLOAT}[dtype]


def _handle(device: torch.device):
    index = device.index if device.index is not None else torch.cuda.current_device()
    handle = _handles.get(index)
    if handle is None:
        with torch.cuda.device(index):
            handle = _handles[index] = _cudnn().create_handle()
    return handle


def _layout(t: torch.Tensor | None):
    return None if t is None else (tuple(t.shape), tuple(t.stride()), t.dtype)


def _as_bias(attn_mask: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor | None:
    """The mask as cuDNN's additive 4-D bias: a boolean mask becomes 0 where attended and -inf elsewhere, as eager
    converts it for its fused kernels."""
    if attn_mask is None:
        return None
    if attn_mask.dtype == torch.bool:
        attn_mask = torch.zeros(attn_mask.shape, dtype=dtype, device=attn_mask.device).masked_fill_(
            attn_mask.logical_not(), float("-inf"))
    while attn_mask.ndim < 4:
        attn_mask = attn_mask.unsqueeze(0)
    return _dense_last_dim(attn_mask)


def _dense_last_dim(t: torch.Tensor) -> torch.Tensor:
    # cuDNN reads the head dim contiguously; a bias must have real strides (an expanded mask is materialized)
    return t if t.stride(-1) == 1 and 0 not in t.stride() else t.contiguous()


def _graph(key: tuple, build):
    entry = _graphs.get(key)
    if entry is not None:
        _stats["hits"] += 1
        return entry
    with _lock:
        entry = _graphs.get(key)
        if entry is None:
            entry = _graphs[key] = build()
            _stats["graphs"] += 1
    return entry


def _new_graph(q: torch.Tensor):
    cudnn = _cudnn()
    return cudnn.pygraph(io_data_type=_data_type(q.dtype), intermediate_data_type=cudnn.data_type.FLOAT,
                         compute_data_type=cudnn.data_type.FLOAT, handle=_handle(q.device))


def _finish(graph) -> None:
    cudnn = _cudnn()
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])


def _forward_graph(q, k, v, bias, is_causal, scale, with_stats, out, stats_out):
    def build():
        g = _new_graph(q)
        Q, K, V = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v)
        B = g.tensor_like(bias) if bias is not None else None
        O, S = g.sdpa(name="sdpa", q=Q, k=K, v=V, generate_stats=with_stats, attn_scale=scale,
                      use_causal_mask=is_causal, **({} if B is None else {"bias": B}))
        O.set_output(True).set_dim(list(out.shape)).set_stride(list(out.stride())).set_data_type(_data_type(q.dtype))
        if with_stats:
            S.set_output(True).set_dim(list(stats_out.shape)).set_stride(list(stats_out.stride())).set_data_type(
                _cudnn().data_type.FLOAT)
        _finish(g)
        return g, (Q, K, V, B, O, S)

    key = ("forward", _layout(q), _layout(k), _layout(v), _layout(bias), bool(is_causal), float(scale), with_stats,
           q.device)
    return _graph(key, build)


def _run(graph, bindings: dict, device) -> None:
    cudnn = _cudnn()
    handle = _handle(device)
    cudnn.set_stream(handle, torch.cuda.current_stream(device).cuda_stream)
    workspace = torch.empty(graph.get_workspace_size(), dtype=torch.uint8, device=device)
    graph.execute({k: t for k, t in bindings.items() if k is not None}, workspace, handle=handle)


def _scale(q, scale):
    return 1.0 / q.shape[-1] ** 0.5 if scale is None else float(scale)


def _forward(q, k, v, attn_mask, is_causal, scale, with_stats):
    q, k, v = _dense_last_dim(q), _dense_last_dim(k), _dense_last_dim(v)
    bias = _as_bias(attn_mask, q.dtype)
    scale = _scale(q, scale)
    out = torch.empty((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
    stats_out = torch.empty((*q.shape[:-1], 1), dtype=torch.float32, device=q.device) if with_stats else None
    graph, (Q, K, V, B, O, S) = _forward_graph(q, k, v, bias, is_causal, scale, with_stats, out, stats_out)
    _run(graph, {Q: q, K: k, V: v, B: bias, O: out, **({S: stats_out} if with_stats else {})}, q.device)
    return out, stats_out


def sdpa_forward(q, k, v, attn_mask, is_causal, scale):
    """Attention's output (inference: no statistics)."""
    return _forward(q, k, v, attn_mask, is_causal, scale, False)[0]


def sdpa_forward_with_stats(q, k, v, attn_mask, is_causal, scale):
    """(output, softmax statistics (logsumexp, float32, [..., L, 1])) for the backward."""
    return _forward(q, k, v, attn_mask, is_causal, scale, True)


def _backward_graph(q, k, v, out, grad_out, softmax_stats, bias, is_causal, scale, dq, dk, dv):
    def build():
        g = _new_graph(q)
        Q, K, V, O = g.tensor_like(q), g.tensor_like(k), g.tensor_like(v), g.tensor_like(out)
        dO, S = g.tensor_like(grad_out), g.tensor_like(softmax_stats)
        B = g.tensor_like(bias) if bias is not None else None
        dQ, dK, dV = g.sdpa_backward(name="sdpa_backward", q=Q, k=K, v=V, o=O, dO=dO, stats=S, attn_scale=scale,
                                     use_causal_mask=is_causal, **({} if B is None else {"bias": B}))
        for port, t in ((dQ, dq), (dK, dk), (dV, dv)):
            port.set_output(True).set_dim(list(t.shape)).set_stride(list(t.stride())).set_data_type(_data_type(q.dtype))
        _finish(g)
        return g, (Q, K, V, O, dO, S, B, dQ, dK, dV)

    key = ("backward", *map(_layout, (q, k, v, out, grad_out, softmax_stats, bias)), bool(is_causal), float(scale),
           q.device)
    return _graph(key, build)


def sdpa_backward(grad_out, q, k, v, out, softmax_stats, attn_mask, is_causal, scale):
    """(grad of query, key, value)."""
    q, k, v, out, grad_out = (_dense_last_dim(t) for t in (q, k, v, out, grad_out))
    bias = _as_bias(attn_mask, q.dtype)
    scale = _scale(q, scale)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    graph, (Q, K, V, O, dO, S, B, dQ, dK, dV) = _backward_graph(q, k, v, out, grad_out, softmax_stats, bias,
                                                                 is_causal, scale, dq, dk, dv)
    _run(graph, {Q: q, K: k, V: v, O: out, dO: grad_out, S: softmax_stats, B: bias, dQ: dq, dK: dk, dV: dv},
         q.device)
    return dq, dk, dv


def check_support(shapes, dtype, mask_shape, mask_dtype, is_causal, scale, backward: bool) -> str | None:
    """Builds (and caches) the graphs a call of these contiguous shapes needs on the current device, without running
    them; the reason cuDNN gives when it cannot, else None. Used while tracing, where only shapes are known."""
    device = torch.device("cuda", torch.cuda.current_device())
    try:
        q, k, v = (torch.empty(s, dtype=dtype, device=device) for s in shapes)
        mask = torch.ones(mask_shape, dtype=mask_dtype, device=device) if mask_shape is not None else None
        bias, scale = _as_bias(mask, dtype), _scale(q, scale)
        out = torch.empty((*q.shape[:-1], v.shape[-1]), dtype=dtype, device=device)
        stats_ = torch.empty((*q.shape[:-1], 1), dtype=torch.float32, device=device) if backward else None
        _forward_graph(q, k, v, bias, is_causal, scale, backward, out, stats_)
        if backward:
            _backward_graph(q, k, v, out, torch.empty_like(out), stats_, bias, is_causal, scale,
                            torch.empty_like(q), torch.empty_like(k), torch.empty_like(v))
    except Exception as e:  # cuDNN's own verdict (cudnnGraphNotSupportedError, an unsupported layout, ...)
        return f"cuDNN cannot build this graph: {type(e).__name__}: {str(e)[:300]}"
    return None
