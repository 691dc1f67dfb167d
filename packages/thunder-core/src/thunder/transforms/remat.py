"""Rematerialization: recompute cheap values in backward instead of saving them."""

from __future__ import annotations

__all__ = ["rematerialize"]


def rematerialize(split):
    return split
