"""Whether cuDNN's fused attention can run here, and if not, why.

It needs a CUDA build of torch, a device of compute capability 8.0 or newer (cuDNN's fused attention kernels start
at Ampere), the cuDNN library (9.0 or newer; CUDA builds of torch bring it as nvidia-cudnn-cu12/-cu13) and the cuDNN
frontend (``pip install nvidia-cudnn-frontend``). :func:`decide` gives the verdict from these facts alone (tested on
CPU); :func:`runtime` gathers them (cuda-python for the device's capability where it is installed).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

__all__ = ["Runtime", "decide", "runtime", "availability", "MIN_CUDNN", "MIN_CAPABILITY"]

MIN_CUDNN = 90000  # cudnn.backend_version(): 9.0.0
MIN_CAPABILITY = (8, 0)


@dataclass(frozen=True)
class Runtime:
    """What the claim decisions depend on: cuDNN's version (``backend_version()``, e.g. 91000) and the device's
    compute capability; None where unknown (no device, no library)."""

    cudnn_version: int | None = None
    capability: tuple | None = None


def decide(torch_version: str, cuda_version: str | None, devices: int, frontend_error: str | None,
           library_error: str | None, rt: Runtime) -> tuple[bool, str]:
    if cuda_version is None:
        return False, f"torch {torch_version} is a CPU-only build: cuDNN attention needs a CUDA build of torch"
    if devices == 0:
        return False, "no CUDA device: cuDNN's fused attention runs on NVIDIA GPUs"
    if frontend_error is not None:
        return False, f"the cuDNN frontend is not installed ({frontend_error}): pip install nvidia-cudnn-frontend"
    if library_error is not None:
        cu = cuda_version.split(".")[0]
        return False, f"the cuDNN library cannot be loaded ({library_error}): pip install nvidia-cudnn-cu{cu}"
    if rt.cudnn_version is not None and rt.cudnn_version < MIN_CUDNN:
        return False, f"cuDNN {_version(rt.cudnn_version)} is older than 9.0, the first this executor supports"
    if rt.capability is not None and tuple(rt.capability) < MIN_CAPABILITY:
        major, minor = rt.capability
        return False, f"the device is sm_{major}{minor}: cuDNN's fused attention needs sm_80 (Ampere) or newer"
    return True, ""


def _version(v: int) -> str:
    # cuDNN 9 numbers versions 9.10.2 as 91002; cuDNN 8 numbered 8.9.7 as 8907
    if v >= 90000:
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return f"{v // 1000}.{v // 100 % 10}.{v % 100}"


def _capability(index: int) -> tuple[int, int]:
    """The device's compute capability through cuda-python (cuda.bindings), else torch."""
    try:
        from cuda.bindings import runtime as cudart

        major = cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrComputeCapabilityMajor, index)[1]
        minor = cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrComputeCapabilityMinor, index)[1]
        return int(major), int(minor)
    except Exception:
        import torch

        return torch.cuda.get_device_capability(index)


@functools.lru_cache(maxsize=None)
def _probe() -> tuple[tuple[bool, str], Runtime]:
    try:
        import torch

        torch_version, cuda_version = torch.__version__, torch.version.cuda
        devices = torch.cuda.device_count() if cuda_version is not None else 0
    except Exception as e:
        return (False, f"cannot query torch and CUDA: {type(e).__name__}: {e}"), Runtime()
    frontend_error = library_error = None
    rt = Runtime()
    if cuda_version is not None and devices:
        try:
            import cudnn
        except Exception as e:
            frontend_error = f"{type(e).__name__}: {e}"
        else:
            try:
                rt = Runtime(int(cudnn.backend_version()), _capability(torch.cuda.current_device()))
            except Exception as e:
                library_error = f"{type(e).__name__}: {e}"
    return decide(torch_version, cuda_version, devices, frontend_error, library_error, rt), rt


def availability() -> tuple[bool, str]:
    """(available, reason), found once per process. Never raises."""
    return _probe()[0]


def runtime() -> Runtime:
    """cuDNN's version and the current device's capability (fields None where there are none)."""
    return _probe()[1]
