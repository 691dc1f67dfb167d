"""Traces of CUDA programs on a machine without a GPU, for testing what GPU executors claim and fuse.

PyTorch's fake tensors carry a device without memory, so a CPU-only build can make fake ``cuda`` tensors. Thunder
traces them like real ones: the proxies are CUDA proxies, and dispatch, grad rules, fusion passes and the printed
traces are those a GPU run gets. :func:`compile_traces` compiles a function for such arguments without running it
(running would need the device)::

    with fake_cuda():
        x = torch.empty(8, 32, device="cuda")
        forward, backward = compile_traces(fn, x, executors=["nvfuser"])
"""

from __future__ import annotations

import contextlib

__all__ = ["fake_cuda", "to_fake_cuda", "compile_traces"]


@contextlib.contextmanager
def fake_cuda():
    """A mode in which ``torch.empty(..., device="cuda")`` and every op on such tensors work without a device."""
    from torch._subclasses import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        yield mode


def to_fake_cuda(module, dtype=None):
    """``module`` with every parameter and buffer replaced by a fake CUDA tensor of the same shape (``dtype`` or
    the same dtype). Call inside :func:`fake_cuda`; ``module.to("cuda")`` needs a CUDA build."""
    import torch

    for m in module.modules():
        for name, p in list(m._parameters.items()):
            if p is not None:
                m._parameters[name] = torch.nn.Parameter(torch.empty(p.shape, dtype=dtype or p.dtype, device="cuda"),
                                                         requires_grad=p.requires_grad)
        for name, b in list(m._buffers.items()):
            if b is not None:
                m._buffers[name] = torch.empty(b.shape, dtype=b.dtype if dtype is None or not b.is_floating_point()
                                               else dtype, device="cuda")
    return module


def compile_traces(fn, *args, executors, **jit_options):
    """(the computation trace that would run, the backward trace or None) of ``thunder.jit(fn, executors=executors,
    **jit_options)`` for ``args``, compiled without running it. The executors' availability is not asked: an
    executor whose runtime needs the device (nvFuser, cuDNN) claims and fuses as it would on a GPU."""
    import thunder
    from thunder.extend import get_executor

    jfn = thunder.jit(fn, executors=[], **jit_options)
    tfn = getattr(jfn, "_tfn", jfn)  # a module's jitted function
    chosen = [get_executor(e) if isinstance(e, str) else e for e in executors]
    tfn.executors = (*chosen, *(e for e in tfn.executors if e not in chosen))  # then the python and torch fallbacks
    entry, _, _ = tfn._compile(args, {})
    backward = entry.backward_traces[-1] if entry.backward_traces else None
    return entry.computation_traces[-1], backward
