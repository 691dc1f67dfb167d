"""``cache_report(jfn)``: the cache entries of a jitted function and why each recompilation happened."""

from __future__ import annotations

__all__ = ["CacheReport", "cache_report"]


class CacheReport:
    """``entries``: one line per cache entry (what its computation takes); ``misses``: the latest
    :class:`thunder.frontend.recompiles.CacheMiss` records, each naming, per entry, the check that rejected the
    call, the value it checked (its path) and what the entry expected vs what the call gave."""

    def __init__(self, name: str, cache_option: str, calls: int, hits: int, entries: list[str], misses: list,
                 recompiles: int):
        self.name, self.cache_option = name, cache_option
        self.calls, self.hits = calls, hits
        self.entries, self.misses, self.recompiles = entries, misses, recompiles

    def __str__(self) -> str:
        n = len(self.entries)
        lines = [f"{self.name}: {self.calls} calls, {self.hits} cache hits, {n} {'entry' if n == 1 else 'entries'} "
                 f"(cache={self.cache_option!r})"]
        lines += [f"  entry {i}: {text}" for i, text in enumerate(self.entries)]
        if self.recompiles > len(self.misses):
            lines.append(f"the latest {len(self.misses)} of {self.recompiles} recompilations:")
        for miss in self.misses:
            lines += ["  " + line for line in str(miss).splitlines()]
        return "\n".join(lines)

    __repr__ = __str__


def cache_report(jfn) -> CacheReport:
    """What is in the cache of ``jfn`` (a function or module returned by ``thunder.jit``) and why each call that
    missed it did: ``print(thunder.examine.cache_report(jfn))``."""
    from thunder.frontend.api import _function

    tfn = _function(jfn)
    stats = tfn.stats
    name = getattr(tfn.fn, "__qualname__", None) or type(tfn.fn).__qualname__
    entries = [_describe_entry(entry) for entry in tfn.entries]
    return CacheReport(name, tfn.cache_option.value, stats.calls, stats.cache_hits, entries, list(stats.misses),
                       stats.recompiles)


def _describe_entry(entry) -> str:
    """The computation's signature: tensors with their metadata, numbers with their type (a number input takes any
    value; the one seen when tracing says nothing about the entry)."""
    from thunder.core.proxies import NumberProxy

    def describe(p) -> str:
        if isinstance(p, NumberProxy):
            return f"{p.name}: {p.python_type.__name__}"
        return f"{p.name}: {p.type_string()}" if hasattr(p, "type_string") else p.name

    return f"computation({', '.join(describe(p) for p in entry.computation_traces[0].args)})"
