"""``PrunePrologueChecks``: drop the prologue's value checks where the caller vouches for the values.

By default only the checks of values reached from the jitted module or function object itself (a module's
parameters, buffers and attributes) are dropped; ``prune_all_checks=True`` drops every value check (tensor
metadata, literal values, lengths, strides). The checks that keep the paths valid (types, identities, keys)
stay. A call that breaks a dropped assumption then runs the cached program on values it was not compiled
for: use this only where nothing changes those values between calls.
"""

from __future__ import annotations

from thunder.core.codegen import ObjectRef
from thunder.core.proxies import Proxy
from thunder.core.trace import TraceProvenance, from_trace
from thunder.transforms.transform import Transform

__all__ = ["PrunePrologueChecks"]

_VALUE_CHECKS = frozenset({"prims.check_tensor", "prims.check_literal", "prims.check_len", "prims.check_strides",
                           "prims.check_tensor_method"})


class PrunePrologueChecks(Transform):
    def __init__(self, prune_all_checks: bool = False):
        self.prune_all_checks = prune_all_checks

    def transform_traces_pre_prologue(self, prologue_trace, computation_trace, epilogue_trace, **kwargs):
        members = set() if self.prune_all_checks else _reached_from_callable(prologue_trace)

        def dropped(bsym) -> bool:
            if bsym.sym.id not in _VALUE_CHECKS:
                return False
            checked = bsym.args[0]
            return self.prune_all_checks or (isinstance(checked, Proxy) and checked.name in members)

        pruned = from_trace(prologue_trace)
        pruned.bound_symbols = [b for b in prologue_trace.bound_symbols if not dropped(b)]
        pruned.provenance = TraceProvenance(f"{type(self).__name__} (prune_all_checks={self.prune_all_checks})")
        return pruned, computation_trace, epilogue_trace


def _reached_from_callable(prologue) -> set[str]:
    """Names of the values the prologue reaches from the jitted callable (its ``fn`` reference) by unpacks."""
    members: set[str] = set()
    for bsym in prologue.bound_symbols:
        if not bsym.sym.name.startswith("unpack") or not bsym.args:
            continue
        source = bsym.args[0]
        from_fn = isinstance(source, ObjectRef) and source.name == "fn"
        if from_fn or (isinstance(source, Proxy) and source.name in members):
            members.update(o.name for o in bsym.flat_proxy_outs)
    return members
