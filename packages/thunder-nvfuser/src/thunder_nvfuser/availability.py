"""Whether nvFuser can run here, and if not, why and what to install.

nvFuser is published as one wheel per CUDA and torch version (``nvfuser-cu130-torch210`` is built for CUDA 13.0 and
torch 2.10); its libraries link against torch's, so a wheel built for another torch fails to load or, worse, loads
with a mismatched ABI. :func:`decide` compares the installed build with the running torch from metadata alone, before
anything is imported; :func:`availability` then imports ``nvfuser_direct``.

``THUNDER_NVFUSER_PRELOAD`` names a shared library loaded (``RTLD_GLOBAL``) before nvFuser. It exists for the
project's GPU test machine, whose torch has no matching wheel and which adapts the nearest build with a small ABI
shim (shared/gpu/README.md); with it set, a build for another torch is accepted. Users install the matching wheel.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import os
import re

__all__ = ["wheel_name", "installed_builds", "decide", "availability", "import_nvfuser", "PRELOAD_VARIABLE"]

PRELOAD_VARIABLE = "THUNDER_NVFUSER_PRELOAD"
_BUILD = re.compile(r"^nvfuser[-_]cu(\d+)[-_]torch(\d+)$", re.IGNORECASE)


def _torch_tag(torch_version: str) -> str:
    """'2.10.1+cu130' -> '210'."""
    major, minor = torch_version.split("+")[0].split(".")[:2]
    return f"{major}{minor}"


def _cuda_tag(cuda_version: str) -> str:
    """'13.0' -> '130', '12.8' -> '128'."""
    major, minor = cuda_version.split(".")[:2]
    return f"{major}{minor}"


def wheel_name(torch_version: str, cuda_version: str) -> str:
    """The nvFuser wheel built for this torch and CUDA: ``nvfuser-cu130-torch210`` for torch 2.10 with CUDA 13.0."""
    return f"nvfuser-cu{_cuda_tag(cuda_version)}-torch{_torch_tag(torch_version)}"


def installed_builds() -> list[str]:
    """Names of the installed nvFuser wheels (``nvfuser-cu130-torch210``), from package metadata."""
    names = set()
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").replace("_", "-").lower()
        if _BUILD.match(name):
            names.add(name)
    return sorted(names)


def _describe_build(build: str) -> str:
    cu, torch_tag = _BUILD.match(build).groups()
    return f"{build} (built for torch {torch_tag[0]}.{torch_tag[1:]} with CUDA {cu[:-1]}.{cu[-1]})"


def decide(torch_version: str, cuda_version: str | None, builds: list[str], *, devices: int,
           preload: str | None = None) -> tuple[bool | None, str]:
    """The verdict that metadata alone gives: (False, reason) when nvFuser cannot run, (True, note) when the
    installed build matches (or ``preload`` adapts it), (None, "") when only importing can tell (no wheel metadata:
    a source build, or nothing installed)."""
    if cuda_version is None:
        return False, (f"torch {torch_version} is a CPU-only build: nvFuser needs a CUDA build of torch, then the "
                       "nvFuser wheel built for it (nvfuser-cu<CUDA>-torch<version>, e.g. nvfuser-cu130-torch210)")
    wanted = wheel_name(torch_version, cuda_version)
    if devices == 0:
        return False, f"no CUDA device: nvFuser generates kernels for NVIDIA GPUs (with one: pip install {wanted})"
    if not builds:
        return None, ""
    if wanted in builds:
        return True, ""
    found = ", ".join(_describe_build(b) for b in builds)
    if preload:
        return True, (f"{found} on torch {torch_version} with CUDA {cuda_version}, adapted by {PRELOAD_VARIABLE}="
                      f"{preload} (a test-machine shim; users install {wanted})")
    return False, (f"installed {found} does not match torch {torch_version} with CUDA {cuda_version}: its libraries "
                   f"link against another torch. pip uninstall {' '.join(builds)}; pip install {wanted}")


def import_nvfuser():
    """``nvfuser_direct``, after loading ``$THUNDER_NVFUSER_PRELOAD`` when it is set."""
    preload = os.environ.get(PRELOAD_VARIABLE)
    if preload:
        ctypes.CDLL(preload, mode=ctypes.RTLD_GLOBAL)
    import nvfuser_direct

    return nvfuser_direct


@functools.lru_cache(maxsize=None)
def availability() -> tuple[bool, str]:
    """(available, reason), asked once per process (importing nvFuser loads large libraries). Never raises."""
    try:
        import torch

        torch_version, cuda_version = torch.__version__, torch.version.cuda
        devices = torch.cuda.device_count() if cuda_version is not None else 0
    except Exception as e:
        return False, f"cannot query torch and CUDA: {type(e).__name__}: {e}"
    ok, reason = decide(torch_version, cuda_version, installed_builds(), devices=devices,
                        preload=os.environ.get(PRELOAD_VARIABLE))
    if ok is False:
        return ok, reason
    try:
        import_nvfuser()
    except Exception as e:
        if ok is None and isinstance(e, ImportError) and getattr(e, "name", None) == "nvfuser_direct":
            return False, f"nvFuser is not installed: pip install {wheel_name(torch_version, cuda_version)}"
        return False, (f"nvfuser_direct failed to import ({type(e).__name__}: {e}); the wheel for this torch is "
                       f"{wheel_name(torch_version, cuda_version)}")
    return True, reason
