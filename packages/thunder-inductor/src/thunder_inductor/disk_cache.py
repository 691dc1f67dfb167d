"""Compiled regions saved on disk, so that a second process skips recording the region as an FX graph.

Inductor's own caches make a second compile of the same FX graph cheap, but recording that graph (``make_fx``
over fake tensors) is repeated in every process and was most of a warm first call. A compiled region is saved
with ``CompiledArtifact.save`` under ``<Inductor's cache directory>/thunder_inductor/``, named by a hash of what
determines it: the region's printed source less its comments (runnable Python, so equal text is an equal
program), the input key
(dtypes, devices, sizes or their pattern, strides, numbers), torch's build and Inductor's configuration. The FX
graph's code is saved beside it for ``fx_graphs``. Inductor's switch for its FX-graph cache turns this one off too.
"""

from __future__ import annotations

import hashlib
import os

__all__ = ["path", "load", "save"]


def path(trace, key) -> str | None:
    """Where the region ``trace`` compiled for ``key`` is saved; None where it may not be cached."""
    from torch._inductor import config
    from torch._inductor.codecache import torch_key
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    # a callable bound at compile time (call_ctx) is not in the printed source
    if not config.fx_graph_cache or any(b.sym.call_ctx for b in trace.bound_symbols):
        return None
    digest = hashlib.sha256()
    code = "\n".join(line for line in str(trace).splitlines() if not line.lstrip().startswith("#"))
    for part in (torch_key(), config.get_hash(), code.encode(), repr(key).encode()):
        digest.update(part)
    return os.path.join(cache_dir(), "thunder_inductor", digest.hexdigest())


def load(saved: str):
    """(compiled callable, FX graph code, shape guards or None) saved at ``saved``, or None."""
    from torch._inductor import CompiledArtifact

    if not (os.path.exists(saved) and os.path.exists(saved + ".py")):
        return None
    try:
        compiled = CompiledArtifact.load(path=saved, format="binary")
        with open(saved + ".py") as f:
            code = f.read()
        guards = None
        if os.path.exists(saved + ".guards"):
            with open(saved + ".guards") as f:
                guards = f.read()
        return compiled, code, guards
    except Exception:  # a stale or partly written entry is a cache miss: the region compiles again
        return None


def save(saved: str, compiled, code: str, guards: str | None = None) -> None:
    from torch._inductor.codecache import write_atomic

    if not compiled.is_saveable():  # nothing serializable was produced: the region compiles in each process
        return
    os.makedirs(os.path.dirname(saved), exist_ok=True)
    write_atomic(saved + ".py", code)
    if guards is not None:  # the graph's integer inputs' guards (compile.py), written before the graph itself
        write_atomic(saved + ".guards", guards)
    compiled.save(path=saved, format="binary")
