"""``thunder.examine.examine(fn, *args, **kwargs)``: will thunder.jit handle this program, and how well?

It runs ``fn`` eagerly first, recording every torch operation it calls (a TorchFunctionMode), and reports
before compiling which of them have a symbol in thunder's torch language and which do not: those run as one
opaque PyTorch call each (correct, but no executor can fuse or decompose them). Then it compiles ``fn`` with
``thunder.jit``, runs it on the same arguments and compares the results with eager. It prints what it
found (as lightning-thunder's ``examine`` does) and returns it as an :class:`ExamineReport`; it never
raises for a problem of ``fn``.
"""

from __future__ import annotations

import dataclasses
import traceback

__all__ = ["examine", "ExamineReport"]


@dataclasses.dataclass
class ExamineReport:
    operations: list[str]  # distinct torch operations the program called, in first-call order
    without_symbol: list[str]  # of those, the ones with no torch-language symbol (run opaquely)
    eager_error: str | None = None  # the program failed without thunder
    compile_error: str | None = None  # thunder.jit failed to compile or run it
    matches_eager: bool | None = None  # the compiled results equal eager's (None: not compared)

    @property
    def works(self) -> bool:
        return self.eager_error is None and self.compile_error is None and bool(self.matches_eager)


def _collector():
    import torch

    class CollectOps(torch.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.seen: dict = {}  # func -> display name
            self.call_sites: dict = {}  # func -> the stack of its first call (frames outside this module)

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func not in self.seen:
                self.seen[func] = _display_name(func)
                self.call_sites[func] = [f for f in traceback.format_stack()[:-1] if __file__ not in f]
            return func(*args, **(kwargs or {}))

    return CollectOps()


def _display_name(func) -> str:
    owner = getattr(func, "__objclass__", None) or getattr(getattr(func, "__self__", None), "__objclass__", None)
    name = getattr(func, "__name__", None) or repr(func)
    if owner is not None:
        return f"{owner.__name__}.{name}"
    module = getattr(func, "__module__", None)
    return f"{module}.{name}" if module else name


def _has_symbol(func) -> bool:
    from thunder.core.proxies import TensorProxy, tensor_methods, torch_function_table

    try:
        if func in torch_function_table:
            return True
    except TypeError:
        return False
    owner = getattr(func, "__objclass__", None) or getattr(getattr(func, "__self__", None), "__objclass__", None)
    name = getattr(func, "__name__", "")
    if owner is not None and owner.__name__ in ("Tensor", "TensorBase", "_TensorBase"):
        return name in tensor_methods or (name in TensorProxy.__dict__ and not name.startswith("__"))
    return False


def _copies(tree):
    """``tree`` with each tensor replaced by a copy (same requires_grad, a leaf)."""
    import torch

    from thunder.core.pytree import tree_map

    return tree_map(lambda x: x.detach().clone().requires_grad_(x.requires_grad) if isinstance(x, torch.Tensor)
                    else x, tree)


def _same(a, b) -> bool:
    import torch

    from thunder.core.pytree import tree_flatten

    la, sa = tree_flatten(a)
    lb, sb = tree_flatten(b)
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or not torch.allclose(x, y, equal_nan=True):
                return False
        elif x != y and not (x != x and y != y):
            return False
    return True


def examine(fn, *args, show_call_stack: bool | int = False, **kwargs) -> ExamineReport | None:
    """``show_call_stack``: True prints where each operation without a symbol was first called (the whole stack),
    a number N only its last N frames."""
    import thunder

    if not callable(fn):
        print(f"examine: expected a callable, got {type(fn).__name__}; use examine(fn, *args, **kwargs) to test "
              "fn(*args, **kwargs)")
        return None
    if isinstance(fn, (thunder.ThunderFunction, thunder.ThunderModule)):
        fn = fn._model if isinstance(fn, thunder.ThunderModule) else fn.fn  # examine the original program

    collector = _collector()
    try:
        with collector:
            expected = fn(*_copies(args), **_copies(kwargs))  # a program that updates its inputs sees them unchanged
    except Exception as e:
        print("Failed to run the unmodified function. Please verify that your code runs without thunder")
        print(f"The code failed with exception - {type(e).__name__}: {e}")
        return ExamineReport([], [], eager_error=f"{type(e).__name__}: {e}")

    operations = list(collector.seen.values())
    without = [name for func, name in collector.seen.items() if not _has_symbol(func)]
    report = ExamineReport(operations, without)
    if not operations:
        print("Found no operations")
    else:
        n = len(operations) - len(without)
        print(f"Found {len(operations)} distinct operations, of which {n} ({100 * n / len(operations):.1f}%) have a "
              "symbol in thunder's torch language")
    if without:
        print("These run as one opaque PyTorch call each (correct, but no executor can fuse or decompose them):")
        for func, name in collector.seen.items():
            if name not in without:
                continue
            print(f"  {name}")
            if show_call_stack is not False:
                stack = collector.call_sites[func]
                frames = stack if show_call_stack is True else stack[-int(show_call_stack):]
                print("    first called at:\n" + "".join("    " + f for f in frames).rstrip())

    try:
        result = thunder.jit(fn)(*args, **kwargs)
    except Exception as e:
        report.compile_error = f"{type(e).__name__}: {e}"
        print("Encountered an error while compiling or running the function with thunder.jit:")
        print(f"  {report.compile_error}")
        return report
    report.matches_eager = _same(result, expected)
    if report.matches_eager:
        print("The function appears to be working as expected")
    else:
        print("The compiled function's results differ from eager's; please file an issue with this program")
    return report
