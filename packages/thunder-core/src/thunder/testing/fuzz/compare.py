"""Eager vs thunder values: the first difference, described, or None. Tolerances depend on the dtype."""

from __future__ import annotations

import math

import torch

__all__ = ["first_difference", "TOLERANCES"]

# (rtol, atol) per dtype; thunder may order floating-point work differently from eager (fusion, decompositions)
TOLERANCES = {torch.float64: (1e-7, 1e-7), torch.float32: (1e-4, 1e-5), torch.bfloat16: (2e-2, 2e-2),
              torch.float16: (2e-3, 2e-3)}


def first_difference(eager, thunder, where: str = "output", tolerance_dtype=None, normwise: bool = False) -> str | None:
    """What differs between ``eager`` and ``thunder`` (type, shape, dtype, requires_grad, values), or None.

    ``tolerance_dtype``: compare float values with at least this dtype's tolerances. ``normwise``: the absolute
    tolerance scales with the largest magnitude in ``eager`` (for gradients, sums of terms that may cancel: a
    different summation order changes an element by rounding errors of the terms, not of the sum)."""
    if type(eager) is not type(thunder) and not (isinstance(eager, torch.Tensor) and isinstance(thunder, torch.Tensor)):
        return f"{where}: type {type(thunder).__name__}, eager {type(eager).__name__}"
    if isinstance(eager, torch.Tensor):
        return _tensor_difference(eager, thunder, where, tolerance_dtype, normwise)
    if isinstance(eager, (list, tuple)):
        if len(eager) != len(thunder):
            return f"{where}: length {len(thunder)}, eager {len(eager)}"
        for i, (e, t) in enumerate(zip(eager, thunder)):
            found = first_difference(e, t, f"{where}[{i}]", tolerance_dtype, normwise)
            if found:
                return found
        return None
    if isinstance(eager, dict):
        if list(eager) != list(thunder):
            return f"{where}: keys {list(thunder)}, eager {list(eager)}"
        return next((d for k in eager
                     if (d := first_difference(eager[k], thunder[k], f"{where}[{k!r}]", tolerance_dtype, normwise))),
                    None)
    if isinstance(eager, float):
        same = math.isclose(eager, thunder, rel_tol=1e-6, abs_tol=1e-9) or (math.isnan(eager) and math.isnan(thunder))
        return None if same else f"{where}: value {thunder!r}, eager {eager!r}"
    return None if eager == thunder else f"{where}: value {thunder!r}, eager {eager!r}"


def _tensor_difference(eager: torch.Tensor, thunder: torch.Tensor, where: str, tolerance_dtype,
                       normwise: bool = False) -> str | None:
    for attribute in ("shape", "dtype", "requires_grad", "device"):
        e, t = getattr(eager, attribute), getattr(thunder, attribute)
        if e != t:
            return f"{where}: {attribute} {t}, eager {e}"
    rtol, atol = TOLERANCES.get(eager.dtype, (0, 0))
    if tolerance_dtype is not None and eager.dtype.is_floating_point:
        rtol, atol = max(rtol, TOLERANCES[tolerance_dtype][0]), max(atol, TOLERANCES[tolerance_dtype][1])
    if normwise and eager.dtype.is_floating_point and eager.numel():
        largest = eager.detach().abs().nan_to_num(0.0, 0.0, 0.0).max().item()
        atol = max(atol, rtol * largest)
    try:
        torch.testing.assert_close(thunder.detach(), eager.detach(), rtol=rtol, atol=atol, equal_nan=True,
                                   check_stride=False)
    except AssertionError as error:
        summary = " ".join(str(error).split("\n")[1:3]).strip()
        return f"{where}: values differ ({summary})"
    return None
