"""The extension points of thunder: the one place they are declared.

A plugin is a module (or object) with functions decorated by ``thunder.plugins.hookimpl`` whose
names match the specs below. Third-party packages advertise it in the entry-point group ``thunder``::

    [project.entry-points.thunder]
    myexecutor = "my_package.plugin"

The built-in ``torch`` and ``python`` executors are registered exactly this way (see thunder-core's
own ``pyproject.toml``).
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("thunder")


@hookspec
def thunder_executors():
    """Return the executors this plugin provides: a list of ``thunder.extend.Executor`` objects.

    Called once, when thunder first needs its executors (the first ``thunder.jit`` call or a call to
    ``thunder.get_all_executors``), not at ``import thunder``. An executor whose runtime is missing
    (no GPU, library not installed) is still returned: its ``availability()`` says why it cannot run,
    and ``python -m thunder executors`` shows the reason. Importing the plugin module must not fail
    for a missing optional runtime: import it lazily inside the executor.

    Each executor's ``priority`` orders the default executor list (higher first); an executor made with
    ``default=False`` is opt-in (named in ``thunder.jit(executors=...)`` or ``add_default_executor``). The torch executor
    has priority 0 and runs everything, so executors that should take precedence use larger values.
    """


@hookspec
def thunder_register_implementations(get_executor):
    """Add implementations to executors registered by any plugin, after all executors are known.

    ``get_executor(name)`` returns the executor of that name or None. A plugin uses it to teach an
    existing executor (e.g. ``"torch"``) a symbol the plugin defines. Return value is ignored.
    """


@hookspec
def thunder_register_copy_lowering(get_executor):
    """Declare how an executor lowers the copy prims of in-place updates.

    ``prims.copy_to_out_(computed, out=t)`` makes ``t`` hold ``computed`` and promises that ``computed`` has no
    later use, so an executor may store the result straight into ``t`` (alias them); ``prims.copy_(computed,
    out=t)`` is the general copy. Call ``get_executor(name).register_copy_lowering(copy_to_out=..., copy=...)``
    with executor symbols (``Executor.register_operator``) taking ``(computed, *, out)``. Executors without a
    lowering leave these copies to the next executor (the torch executor copies with ``Tensor.copy_``).
    """
