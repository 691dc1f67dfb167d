"""PyTorch's OpInfo database as the conformance tests use it: the ops by key, which of them draw random
numbers or return uninitialized memory, and the tolerances the OpInfos declare."""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI"):  # in CI a missing test dependency is an install bug, not a reason to skip
    from torch.testing._internal.common_methods_invocations import op_db
else:
    op_db = pytest.importorskip("torch.testing._internal.common_methods_invocations").op_db
from torch.testing._internal.common_device_type import toleranceOverride  # noqa: E402

RANDOM = {
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal", "normal.in_place",
    "normal.number_mean", "uniform", "randn", "randn_like", "rand_like", "randint", "randint_like",
    "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout.with_train", "nn.functional.rrelu",
}
UNINITIALIZED = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}


def op_key(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


OPS = {op_key(op): op for op in op_db}


def declared_tolerance(op, dtype) -> tuple[float, float] | None:
    """(atol, rtol) from the OpInfo's toleranceOverride decorators for ``dtype`` (the loosest), or None."""
    found = None
    for info in op.decorators or ():
        for d in getattr(info, "decorators", ()) or ():
            if isinstance(d, toleranceOverride) and dtype in d.d:
                t = d.d[dtype]
                found = (t.atol, t.rtol) if found is None else (max(found[0], t.atol), max(found[1], t.rtol))
    return found
