"""What a jitted call saves for backward, tensor by tensor."""

from __future__ import annotations

from thunder.core.proxies import TensorProxy, pyval

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

    entry = compile_stats(jfn).last_entry
    entries, seen = [], set()
    for p in entry.saved_for_backward if entry is not None else ():
        if isinstance(p, TensorProxy) and p.name not in seen:
            seen.add(p.name)
            n = p.dtype.bytes
            for d in p.shape:
                n *= int(pyval(d))
            entries.append((p.name, p.type_string(), n))
    return SavedForBackward(entries)
