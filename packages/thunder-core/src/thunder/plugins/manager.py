"""Finding and loading plugins: the entry-point group ``thunder``, loaded once and lazily.

A plugin that fails to import is reported (``plugin_failures()`` and ``python -m thunder executors``),
with a warning, and never breaks ``import thunder`` or jitting with the other executors.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import threading
import warnings

import pluggy

from thunder.plugins import hookspecs

__all__ = ["hookimpl", "load_plugins", "plugin_failures", "get_plugin_manager", "BUILTIN_PLUGINS"]

hookimpl = pluggy.HookimplMarker("thunder")

# Registered even when thunder-core runs from a source tree without installed metadata; with metadata
# the same modules are found through the entry points and registered only once.
BUILTIN_PLUGINS = {"torch": "thunder.executors.torchex", "python": "thunder.executors.pythonex"}

_lock = threading.RLock()
_pm: pluggy.PluginManager | None = None
_failures: dict[str, str] = {}


def get_plugin_manager() -> pluggy.PluginManager:
    load_plugins()
    return _pm


def plugin_failures() -> dict[str, str]:
    """Entry points that could not be loaded: name -> reason."""
    load_plugins()
    return dict(_failures)


def _register_module(pm: pluggy.PluginManager, name: str, module_name: str) -> None:
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # a broken plugin must not break thunder
        _failures[name] = f"importing {module_name} failed: {type(e).__name__}: {e}"
        warnings.warn(f"thunder plugin {name!r} could not be loaded: {_failures[name]}", RuntimeWarning, stacklevel=3)
        return
    if not pm.is_registered(module):
        pm.register(module, name=name)


def load_plugins() -> None:
    global _pm
    if _pm is not None:
        return
    with _lock:
        if _pm is not None:
            return
        pm = pluggy.PluginManager("thunder")
        pm.add_hookspecs(hookspecs)
        for ep in importlib.metadata.entry_points(group="thunder"):
            _register_module(pm, ep.name, ep.value)
        for name, module_name in BUILTIN_PLUGINS.items():
            _register_module(pm, name, module_name)

        from thunder import extend

        _pm = pm  # set first: hook implementations may ask thunder.extend for executors
        for executors in pm.hook.thunder_executors():
            for ex in executors or ():
                extend.register_executor(ex)
        pm.hook.thunder_register_implementations(get_executor=extend._executors.get)
        pm.hook.thunder_register_copy_lowering(get_executor=extend._executors.get)
