"""What a jitted call saves for backward, tensor by tensor."""

from __future__ import annotations

from thunder.core.proxies import TensorProxy

__all__ = ["SavedForBackward", "saved_for_backward"]


class SavedForBackward:
    """The values the last call's forward saved for its backward: ``entries`` are (name, description, bytes)."""

    def __init__(self, entries: list[tuple[str, str, int]]):
        self.entries = entries
        self.total_bytes = sum(n for _, _, n in entries)

    def __str__(self) -> str:
        lines = [f"{self.total_bytes} bytes saved for backward in {len(self.entries)} tensors"]
        lines += [f"  {name}: {what}, {n} bytes" for name, what, n in sorted(self.entries, key=lambda e: -e[2])]
        return "\n".join(lines)

    __repr__ = __str__


def saved_for_backward(jfn) -> SavedForBackward:
    from thunder.frontend.api import compile_stats
    from thunder.transforms.autograd import tensor_bytes

    entry = compile_stats(jfn).last_entry
    saved = entry.saved_for_backward if entry is not None else ()
    return SavedForBackward([(p.name, p.type_string(), tensor_bytes(p)) for p in {p.name: p for p in saved}.values()
                             if isinstance(p, TensorProxy)])
