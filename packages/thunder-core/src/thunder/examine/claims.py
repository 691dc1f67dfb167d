"""Which executor ran each operation of a jitted function, and why an executor did not."""

from __future__ import annotations

__all__ = ["Claim", "claims"]


class Claim:
    """One operation of the trace dispatch received: its symbol, the user's source line, and ``reason``, why the
    executor asked about did not take it (None: it did)."""

    __slots__ = ("symbol", "source", "reason")

    def __init__(self, symbol: str, source, reason: str | None):
        self.symbol, self.source, self.reason = symbol, source, reason

    def __repr__(self) -> str:
        where = f" ({self.source})" if self.source is not None else ""
        return f"{self.symbol}{where}: " + ("claimed" if self.reason is None else f"not claimed: {self.reason}")


def _dispatched(traces) -> list:
    """The traces dispatch received: the one before each "Transform for execution"."""
    return [traces[i - 1] for i, t in enumerate(traces)
            if i and t.provenance is not None and t.provenance.description == "Transform for execution"]


def claims(jfn, executor) -> list[Claim]:
    """For each operation of the last computation (and backward) trace ``jfn`` compiled, before dispatch: whether
    ``executor`` (an Executor or its name) runs it, and if not, its reason (``Executor.why_not``).

    >>> for c in thunder.examine.claims(jfn, "cudnn"): print(c)
    scaled_dot_product_attention (model.py:12): not claimed: dtype float32: cuDNN's fused attention ...
    """
    import thunder
    from thunder.extend import get_executor

    ex = get_executor(executor) if isinstance(executor, str) else executor
    if ex is None:
        raise ValueError(f"unknown executor {executor!r}")
    traces = _dispatched(thunder.last_traces(jfn)) + _dispatched(thunder.last_backward_traces(jfn) or [])
    return [Claim(b.sym.id, b.source, ex.why_not(b)) for t in traces for b in t.bound_symbols
            if not {"prologue", "epilogue"} & set(b.sym.tags)]
