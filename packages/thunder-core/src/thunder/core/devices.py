"""Devices as traces see them: a type ('cpu', 'cuda', 'meta') and an index."""

from __future__ import annotations

__all__ = ["Device", "cpu", "to_device", "to_torch_device"]


class Device:
    __slots__ = ("type", "index")

    def __init__(self, type: str, index: int | None = None):
        if index is None and ":" in type:  # Device("cuda:1"), as torch.device accepts
            type, _, given = type.partition(":")
            index = int(given)
        if type == "cuda" and index is None:
            index = 0
        self.type, self.index = type, index

    def __eq__(self, other) -> bool:
        if isinstance(other, Device):
            return self.type == other.type and self.index == other.index
        if type(other).__name__ == "device" and hasattr(other, "index"):  # a torch.device (core imports no torch)
            return self.type == other.type and self.index == other.index
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def to_torch(self):
        import torch

        return torch.device(repr(self))


cpu = Device("cpu")
_cache: dict = {}


def to_device(x) -> Device | None:
    """A str like 'cuda:1', a torch.device, or a Device -> Device."""
    if x is None or isinstance(x, Device):
        return x
    key = x if isinstance(x, str) else str(x)
    d = _cache.get(key)
    if d is None:
        type_, _, index = key.partition(":")
        d = _cache[key] = Device(type_, int(index) if index else None)
    return d


def to_torch_device(x):
    """A Device, str or torch.device as a torch.device (None passes through)."""
    if x is None:
        return None
    return to_device(x).to_torch()
