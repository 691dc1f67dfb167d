"""Thunder's plugin system (pluggy). Extension points are declared in :mod:`thunder.plugins.hookspecs`."""

from thunder.plugins.manager import hookimpl, load_plugins, plugin_failures

__all__ = ["hookimpl", "load_plugins", "plugin_failures"]
