"""Generated kernels, cached by the region's structure.

The key is the generated source plus the launch spec: regions with the same ops, dtypes, ranks and
broadcast pattern (the same block in every layer, the same program at another size) share one entry, so
their kernel is generated, loaded and (on a GPU) compiled once. Sizes are kernel arguments and not part
of the key. Sources are written to files (``triton.jit`` reads a kernel's source from its file, and users
can open them): ``$THUNDER_TRITON_CACHE_DIR``, by default ``<tmp>/thunder_triton_<user>``.
"""

from __future__ import annotations

import getpass
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

from thunder.core.symbol import Symbol
from thunder_triton.codegen import KERNEL_NAME_PLACEHOLDER, generate

__all__ = ["region_launcher", "cache_dir", "stats", "clear"]

_lock = threading.Lock()
_launchers: dict[str, object] = {}
_stats = {"kernels": 0, "hits": 0}


def cache_dir() -> str:
    d = os.environ.get("THUNDER_TRITON_CACHE_DIR")
    if not d:
        try:
            user = getpass.getuser()
        except Exception:
            user = str(os.getuid()) if hasattr(os, "getuid") else "user"
        d = os.path.join(tempfile.gettempdir(), f"thunder_triton_{user}")
    os.makedirs(d, exist_ok=True)
    return d


def stats() -> dict:
    """{'kernels': regions generated and loaded, 'hits': regions that reused one}."""
    return dict(_stats)


def clear() -> None:
    with _lock:
        _launchers.clear()
        _stats.update(kernels=0, hits=0)


def _load(name: str, source: str):
    path = os.path.join(cache_dir(), f"{name}.py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "w") as f:
            f.write(source)
        os.replace(tmp, path)  # atomic: concurrent processes never read half a file
    spec = importlib.util.spec_from_file_location(f"thunder_triton_kernels.{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return getattr(module, name), path


def region_launcher(executor, prims_, domain, raxis, tensor_inputs, outputs):
    """(launcher, scalar arguments) of a region: the launcher is shared by every region of the same structure,
    made (and its kernel loaded) on first sight."""
    from thunder_triton.launcher import RegionLauncher

    source, spec, scalars = generate(prims_, domain, raxis, tensor_inputs, outputs)
    digest = hashlib.sha256((source + spec.key()).encode()).hexdigest()[:12]
    kind = "reduction" if raxis is not None else "pointwise"
    name = f"triton_{kind}_{digest}"
    with _lock:
        launcher = _launchers.get(name)
        if launcher is not None:
            _stats["hits"] += 1
            return launcher, scalars
        source = source.replace(KERNEL_NAME_PLACEHOLDER, name)
        kernel, path = _load(name, source)
        writes_inputs = any(s[0] is not None for s in spec.stores)  # copy_to_out_ targets: never dropped
        launcher = RegionLauncher(name, source, path, spec, kernel)
        launcher.symbol = _launcher_symbol(executor, launcher, side_effect=writes_inputs)
        _launchers[name] = launcher
        _stats["kernels"] += 1
        return launcher, scalars


def _launcher_symbol(executor, launcher, *, side_effect: bool) -> Symbol:
    """Prints as a call of the launcher (bound by name when the trace is compiled), with the kernel source
    as a comment the first time the trace calls it."""
    from thunder.core.codegen import bsym_lines

    plain = Symbol(launcher.name, id=f"triton.{launcher.name}", is_prim=True, executor=executor,
                   call_ctx={launcher.name: launcher}, tags=("side_effect",) if side_effect else ())

    def printer(bsym, imports):
        lines = []
        if launcher.name not in imports.ctx:
            lines.append(f"# {launcher.name}: generated Triton kernel ({launcher.path})")
            lines += [f"#   {line}" if line else "#" for line in launcher.source.rstrip().splitlines()]
        return lines + bsym_lines(bsym.replace(sym=plain), set(), with_subsymbols=False, imports=imports, indent="")

    return Symbol(launcher.name, id=plain.id, is_prim=True, executor=executor, call_ctx=plain.call_ctx,
                  tags=plain.tags, python_printer=printer)
