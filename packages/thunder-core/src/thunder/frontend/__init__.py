"""``thunder.jit`` and what it returns: interpretation, tracing, caching."""
