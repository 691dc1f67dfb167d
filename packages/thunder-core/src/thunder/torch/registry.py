"""How torch callables map to the torch language.

``@torchsymbol(torch.sin, torch.Tensor.sin, method="sin")`` turns a decomposition into a symbol of the
language (id ``ltorch.sin``), records which torch callables it stands for (so the jit's lookaside and
``TensorProxy.__torch_function__`` find it) and which Tensor method names it provides.
"""

from __future__ import annotations

from thunder.core.proxies import tensor_methods, torch_function_table
from thunder.core.symbol import Symbol

__all__ = ["torchsymbol", "language_symbols", "register_method"]

language_symbols: dict[str, Symbol] = {}


def torchsymbol(*torch_fns, method: str | tuple[str, ...] | None = None, name: str | None = None, tags: tuple = ()):
    def decorator(fn) -> Symbol:
        sym_name = name or fn.__name__
        sym = Symbol(sym_name, fn, id=f"ltorch.{sym_name}", module="thunder.torch", alias="ltorch", tags=tags)
        for tf in torch_fns:
            torch_function_table[tf] = sym
        for m in (method,) if isinstance(method, str) else (method or ()):
            tensor_methods[m] = sym
        language_symbols[sym_name] = sym
        return sym

    return decorator


def register_method(method_name: str, fn, *torch_fns) -> None:
    """A Tensor method (or torch callable) that is plain Python over language symbols (e.g. ``size``)."""
    tensor_methods[method_name] = fn
    for tf in torch_fns:
        torch_function_table[tf] = fn
