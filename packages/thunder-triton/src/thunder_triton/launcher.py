"""Running a region: strides, output allocation, block sizes and the launch.

Called from the compiled trace as ``(t3, t7) = triton_reduction_ab12(x, w, s0, 4, 768)``: tensors, scalar
numbers, then the domain sizes (ints, or the values of IntegerProxy sizes under symbolic values).
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from thunder.core import dtypes
from thunder_triton.claims import interpreting
from thunder_triton.regions import REDUCED

__all__ = ["RegionLauncher", "block_sizes", "launch_options", "observe_launches"]

# Called with (launcher, kernel arguments, the launch options a GPU would use) at every launch; see observe_launches.
_observers: list = []


@contextmanager
def observe_launches(observer):
    """Calls ``observer(launcher, args, gpu_options)`` at every region launch while the block runs (how the
    ahead-of-time check in ``thunder_triton.aot`` learns what a GPU would compile)."""
    _observers.append(observer)
    try:
        yield observer
    finally:
        _observers.remove(observer)


def _next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def block_sizes(xnumel: int, rnumel: int | None, *, interpreter: bool) -> tuple[int, int | None, int]:
    """(XBLOCK, RBLOCK, num_warps). The interpreter runs each program in numpy, so it gets large blocks;
    on a GPU a block is a few thousand elements spread over the warps."""
    budget = 1 << 16 if interpreter else 4096
    if rnumel is None:
        xblock = min(_next_pow2(xnumel), budget if interpreter else 1024)
        return xblock, None, 4
    rblock = _next_pow2(rnumel)
    xblock = max(1, min(_next_pow2(xnumel), budget // rblock))
    elements = xblock * rblock
    return xblock, rblock, 4 if elements <= 2048 else (8 if elements <= 8192 else 16)


def launch_options(xnumel: int, rnumel: int | None, *, interpreter: bool) -> dict:
    """The kernel's constexpr block sizes and ``num_warps``, as keyword arguments of a launch."""
    xblock, rblock, num_warps = block_sizes(xnumel, rnumel, interpreter=interpreter)
    return dict(XBLOCK=xblock, num_warps=num_warps) | ({} if rblock is None else dict(RBLOCK=rblock))


def _strides(t: torch.Tensor, dim_map, level_dims) -> list[int]:
    """Per domain dim (of ``level_dims``), the stride to step ``t`` with: 0 along broadcast dims."""
    by_dim = {}
    for j, k in enumerate(dim_map):
        if t.shape[j] != 1:
            by_dim[k] = t.stride(j)
    return [by_dim.get(k, 0) for k in level_dims]


class RegionLauncher:
    def __init__(self, name, source, path, spec, kernel):
        self.name, self.source, self.path, self.spec, self.kernel = name, source, path, spec, kernel
        n, r = spec.rank, spec.raxis
        self._all_dims = list(range(n))
        self._outer_dims = [k for k in range(n) if k != r]
        self._torch_dtypes = [dtypes.to_torch_dtype(d) for _, d in spec.new_outputs]

    def __repr__(self) -> str:
        return f"<Triton region {self.name}>"

    def _level_dims(self, level):
        return self._outer_dims if level == REDUCED else self._all_dims

    def __call__(self, *args):
        spec = self.spec
        nt, ns = spec.n_tensors, spec.n_scalars
        tensors, scalars, sizes = args[:nt], args[nt:nt + ns], [int(d) for d in args[nt + ns:]]
        r = spec.raxis
        device = tensors[0].device
        outs = []
        for (form, _), dtype in zip(spec.new_outputs, self._torch_dtypes):
            shape = sizes if form == "full" else (
                [d for k, d in enumerate(sizes) if k != r] if form == "dropped" else
                [1 if k == r else d for k, d in enumerate(sizes)])
            outs.append(torch.empty(shape, dtype=dtype, device=device))
        strides = []
        for idx, level, dim_map in spec.loads:
            strides += _strides(tensors[idx], dim_map, self._level_dims(level))
        new_index = 0
        for idx, level, dim_map in spec.stores:
            if idx is None:
                t = outs[new_index]
                new_index += 1
            else:
                t = tensors[idx]
            strides += _strides(t, dim_map, self._level_dims(level))
        xnumel = 1
        for k in self._outer_dims if r is not None else self._all_dims:
            xnumel *= sizes[k]
        results = tuple(outs[i] if kind == "new" else tensors[i] for kind, i in spec.results)
        if xnumel == 0 or (r is not None and sizes[r] == 0 and not outs):
            return results
        rnumel = sizes[r] if r is not None else None
        args = [*tensors, *outs, *scalars, *sizes, *strides, xnumel] + ([] if r is None else [rnumel])
        interpreter = interpreting()
        options = launch_options(xnumel, rnumel, interpreter=interpreter)
        for observe in _observers:
            observe(self, args, options if not interpreter else launch_options(xnumel, rnumel, interpreter=False))
        grid = ((xnumel + options["XBLOCK"] - 1) // options["XBLOCK"],)
        self.kernel[grid](*args, **options)
        return results
