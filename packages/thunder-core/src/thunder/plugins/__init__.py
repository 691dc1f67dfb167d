"""Thunder's extension plugins (pluggy): how packages provide executors. Extension points are declared in
:mod:`thunder.plugins.hookspecs`.

lightning-thunder's *compile plugins* (``thunder.plugins.DDP``, ``FSDP``, ``FP8``, ``QuantizeInt4``,
``ReduceOverhead``, ``get_plugin``, ``register_plugin``), used with ``thunder.compile(..., plugins=...)``,
are a different thing that lives in :mod:`thunder.recipes.plugins`; they are reachable here under their
lightning-thunder names, loaded on first use.
"""

from thunder.plugins.manager import hookimpl, load_plugins, plugin_failures

__all__ = ["hookimpl", "load_plugins", "plugin_failures"]

_COMPILE_PLUGIN_NAMES = frozenset({"DDP", "FSDP", "FP8", "QuantizeInt4", "ReduceOverhead", "get_plugin",
                                   "get_plugin_names", "register_plugin", "names_to_plugins"})


def __getattr__(name: str):
    if name in _COMPILE_PLUGIN_NAMES:
        from thunder.recipes import plugins as compile_plugins

        return getattr(compile_plugins, name)
    raise AttributeError(f"module 'thunder.plugins' has no attribute {name!r}")
