"""The check that a call may run the graph a region ran last, mostly in one C++ call.

A region's call otherwise computes its input key (a tuple of dtypes and devices, 3-4 us for a GPT layer's 19
tensors), finds the graphs compiled for it and evaluates each one's guard expression (one Python comparison per
static size and stride: 10 us for a GPT layer), about 20 us a call, paid by every region of every decode step. A
decode loop calls each region with inputs the same graph accepts every time, so the graph that ran is tried first,
with a check that says yes only where the full lookup would run that graph on these inputs: PyTorch's
``TensorGuards`` (what ``torch.compile``'s guards and thunder's prologue run) tests every tensor's class, dtype,
device, requires_grad, dispatch keys and its static sizes and strides in one call (1.5 us for 20 tensors); the
numbers baked into the graph are compared as one tuple; what is left of the guards (storage offsets, relations
between symbolic sizes, the graph's integer inputs) stays a Python expression. Where it says no, the call takes the
full lookup.

A symbolic graph's guard expression is mostly relations between sizes and strides (``t8.size() == (1, 4, t2.size()[3],
32)``): 25-30 us a call for a GPT's 90 tensors in Python. Where a region is called again and again with tensors of the
same layout (litgpt's decode step: the KV cache has its full length from the start), ``exact_layout=True`` gives a
check specialized to the layout of the call that built it: TensorGuards tests every size and stride, the storage
offsets are compared, and of the guards only those that read one of the graph's integer inputs stay. The guards that
read tensors alone are functions of those sizes, strides and offsets, which are the ones of a call the guards accepted,
so the check says yes only where the guards would.
"""

from __future__ import annotations

import re

__all__ = ["fast_check"]

try:
    from torch._C._dynamo.guards import TensorGuards
except ImportError:  # a PyTorch without it: every call takes the full lookup
    TensorGuards = None

# one dim of a size or stride equal to a literal: the guards a TensorGuards checks
_STATIC_DIM = re.compile(r"t(\d+)\.(size|stride)\(\)\[(\d+)\] == (-?\d+)")
_WHOLE = re.compile(r"t(\d+)\.(size|stride)\(\) == \((.*)\)")
_NAME = re.compile(r"\bt(\d+)\b")
_LAYOUT_READ = re.compile(r"\bt\d+\.(?:size|stride|storage_offset)\(\)")


def fast_check(guards: str | None, tensors, numbers, dynamic: tuple[int, ...], symbolic: bool,
               exact_layout: bool = False):
    """A function of a region's arguments (its tensors, then its numbers) that returns the graph's inputs (the
    tensors, then the numbers at ``dynamic``) where the graph compiled for ``tensors`` and ``numbers`` with
    ``guards`` (its guard expression over ``t0, t1, ...``, the graph's inputs; None: none) accepts them, else None.
    Without ``symbolic`` the graph assumed the exact sizes, strides and storage offsets of ``tensors``; with
    ``exact_layout`` (``tensors`` and ``numbers`` then are a call ``guards`` accepted) the check accepts only those
    too. None where PyTorch has no ``TensorGuards``."""
    if TensorGuards is None:
        return None
    n = len(tensors)
    sizes = [[None] * t.dim() for t in tensors]
    strides = [[None] * t.dim() for t in tensors]
    table = {"size": sizes, "stride": strides}
    if symbolic and not exact_layout:
        rest = []
        for g in _top_level_terms(guards or ""):
            if not _static_dims(g, table, n):
                rest.append(g)
    else:
        for i, t in enumerate(tensors):
            sizes[i], strides[i] = list(t.shape), list(t.stride())
        rest = [f"t{i}.storage_offset() == {t.storage_offset()}" for i, t in enumerate(tensors)]
        # the guards that read the graph's integers; the others read only what was just fixed
        rest += [g for g in _top_level_terms(guards or "") if not _reads_layout_only(g, n)]
    try:
        tensor_guards = TensorGuards(*tensors, dynamic_dims_sizes=sizes, dynamic_dims_strides=strides)
    except Exception:  # a signature this PyTorch does not have
        return None
    baked = tuple(i for i in range(len(numbers)) if i not in dynamic)
    # the guards name the graph's inputs: the tensors, then the integers at ``dynamic``
    arg_of = {i: i for i in range(n)} | {n + j: n + d for j, d in enumerate(dynamic)}
    rest = [_NAME.sub(lambda m: f"a{arg_of[int(m.group(1))]}", g) for g in rest]
    params = ", ".join(f"a{i}" for i in range(n + len(numbers)))
    tests = [f"check({', '.join(f'a{i}' for i in range(n))})",
             f"({''.join(f'a{n + i}, ' for i in baked)}) == baked", *rest]
    inputs = "".join(f"a{arg_of[i]}, " for i in range(n + len(dynamic)))
    source = (f"def region_check({params}):\n"
              f"    if {' and '.join(tests)}:\n"
              f"        return ({inputs})\n"
              f"    return None\n")
    from torch.fx.experimental.symbolic_shapes import SYMPY_INTERP  # the names (Max, Min, ...) guards use

    namespace = {**SYMPY_INTERP, "check": tensor_guards.check, "baked": tuple(numbers[i] for i in baked)}
    exec(compile(source, "<thunder_inductor region check>", "exec"), namespace)
    return namespace["region_check"]


def _reads_layout_only(guard: str, n: int) -> bool:
    """Whether ``guard`` reads inputs, only the first ``n`` (the tensors), and of them only sizes, strides and
    storage offsets."""
    names = _NAME.findall(guard)
    return (bool(names) and max(map(int, names)) < n
            and len(_LAYOUT_READ.findall(guard)) == len(names))


def _static_dims(guard: str, table: dict, n: int) -> bool:
    """Records in ``table`` the dims of a size or stride that ``guard`` fixes to literals; True where that is all
    ``guard`` says (a whole-tuple guard with a symbolic entry keeps its other entries in the expression: False)."""
    m = _STATIC_DIM.fullmatch(guard)
    if m and int(m.group(1)) < n:
        i, kind, d, value = int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
        table[kind][i][d] = value
        return True
    m = _WHOLE.fullmatch(guard)
    if not m or int(m.group(1)) >= n:
        return False
    i, kind = int(m.group(1)), m.group(2)
    entries = [e.strip() for e in m.group(3).split(",") if e.strip()]
    if len(entries) != len(table[kind][i]) or not all(re.fullmatch(r"-?\d+", e) for e in entries):
        return False
    table[kind][i] = [int(e) for e in entries]
    return True


def _top_level_terms(expression: str) -> list[str]:
    """The operands of the top-level ``and``s of ``expression`` (the guards joined)."""
    terms, depth, start, i = [], 0, 0, 0
    while i < len(expression):
        c = expression[i]
        depth += c in "([{"
        depth -= c in ")]}"
        if depth == 0 and expression.startswith(" and ", i):
            terms.append(expression[start:i])
            i = start = i + 5
            continue
        i += 1
    if expression[start:].strip():
        terms.append(expression[start:])
    return terms
