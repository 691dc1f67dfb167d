"""The table of gradient rules, keyed by symbol id (``prims.sin``, ``ltorch.softmax``)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["register_grad", "grad_rule", "grad_rules", "register_nondifferentiable", "nondifferentiable", "needs_grad",
           "is_nondifferentiable", "register_saved_as_view", "register_saved_by_eager", "saved_as_view",
           "saved_by_eager"]

grad_rules: dict[str, Callable] = {}
_loaded = False


def register_grad(*symbols) -> Callable:
    """``@register_grad(prims.sin)`` (symbols or ids): the decorated function is their gradient rule."""

    def decorator(rule: Callable) -> Callable:
        for sym in symbols:
            grad_rules[sym if isinstance(sym, str) else sym.id] = rule
        return rule

    return decorator


def grad_rule(sym_id: str) -> Callable | None:
    _load_builtin_rules()
    return grad_rules.get(sym_id)


def _load_builtin_rules() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        import thunder.grad.higher_order_rules  # noqa: F401
        import thunder.grad.prim_rules  # noqa: F401
        import thunder.grad.torch_rules  # noqa: F401


# Symbols whose outputs never carry gradients even when their inputs do (``detach``): recorded as they
# are, their outputs are constants to the backward.
nondifferentiable: set[str] = set()


def register_nondifferentiable(*symbols) -> None:
    nondifferentiable.update(s if isinstance(s, str) else s.id for s in symbols)


# the names carrying gradients in the differentiator applying a rule (innermost last)
_active: list = []


def needs_grad(x) -> bool:
    """Called by a rule while it records the forward: whether argument ``x`` carries a gradient, so that a fused
    backward computes only the gradients asked for (as eager's ``needs_input_grad``). True outside a rule."""
    from thunder.core.proxies import TensorProxy

    return isinstance(x, TensorProxy) and (not _active or x.name in _active[-1])
def is_nondifferentiable(sym_id: str) -> bool:
    _load_builtin_rules()  # the table is filled when the rules load (detach may be the first symbol asked about)
    return sym_id in nondifferentiable


# Symbols whose eager backward node saves a tensor argument that thunder's gradient does not read (``gather`` saves
# its input, for its shape): symbol id -> the names of those parameters. The caller's in-place update of that tensor
# after the call fails eager's backward on reaching the node; thunder's node keeps a reference to it and checks its
# version as eager's does, at the place of eager's node in the backward (transforms/autograd.py).
_saved_by_eager: dict[str, tuple[str, ...]] = {}


def register_saved_by_eager(symbol, *params: str) -> None:
    _saved_by_eager[symbol if isinstance(symbol, str) else symbol.id] = params


def saved_by_eager(sym_id: str) -> tuple[str, ...]:
    _load_builtin_rules()
    return _saved_by_eager.get(sym_id, ())


# Symbols whose eager backward node saves a view of a tensor argument where thunder's backward reads the tensor itself
# (``linear``'s mm saves ``weight.t()``): symbol id -> {parameter name: the view, of a torch tensor}. Only the version
# check's message reads it (frontend/eager_saved_views.py): a caller's update of that tensor names eager's view.
_saved_as_view: dict[str, dict[str, object]] = {}


def register_saved_as_view(symbol, param: str, view) -> None:
    _saved_as_view.setdefault(symbol if isinstance(symbol, str) else symbol.id, {})[param] = view


def saved_as_view(sym_id: str) -> dict:
    _load_builtin_rules()
    return _saved_as_view.get(sym_id, {})
