"""Reduces a failing program while its failure kind stays the same: fewer calls, statements, inputs and returns,
smaller sizes and plainer dtypes. Greedy: each step keeps the first simplification that still fails the same way."""

from __future__ import annotations

import re

from thunder.testing.fuzz.program import Program
from thunder.testing.fuzz.runner import calls_for, run_program

__all__ = ["shrink"]


def _defines(program: Program, name: str) -> bool:
    return name in program.params or any(re.search(rf"^\s*{name} = ", s, re.M) for s in program.body)


def _mentions(program: Program, name: str) -> bool:
    return any(re.search(rf"\b{name}\b", s) for s in program.body + program.returns)


def _without_statement(program: Program, index: int) -> Program:
    smaller = program.replace(body=program.body[:index] + program.body[index + 1:])
    return smaller.replace(returns=[r for r in smaller.returns if _defines(smaller, r)])


def _well_formed(program: Program) -> bool:
    """Every variable a statement reads is defined before it (deleting a definition must not make a NameError)."""
    defined = set(program.params)
    for statement in program.body + [", ".join(program.returns)]:
        if any(name not in defined for name in re.findall(r"\b[vt]\d+\b|\b[nf]0\b", statement)
               if not re.search(rf"^\s*{name} = ", statement, re.M)):
            return False
        defined.update(re.findall(r"^\s*(\w+) = ", statement, re.M))
    return True


def _candidates(program: Program, calls: list, failing_call: int):
    """Simpler (program, calls) pairs, most promising first."""
    if failing_call + 1 < len(calls):
        yield program, calls[:failing_call + 1]
    for i in range(len(calls) - 1):
        yield program, calls[:i] + calls[i + 1:]
    for i in reversed(range(len(program.body))):
        yield _without_statement(program, i), calls
    for i in range(len(program.returns)):
        yield program.replace(returns=program.returns[:i] + program.returns[i + 1:]), calls
    for t in program.tensors:
        if not _mentions(program, t.name):
            yield program.replace(tensors=[u for u in program.tensors if u is not t]), calls
    for n in program.numbers:
        if not _mentions(program, n.name):
            yield program.replace(numbers=[m for m in program.numbers if m is not n]), calls
    for t in program.tensors:
        if t.dtype in ("float64", "bfloat16") or t.requires_grad:
            plainer = [u if u is not t else type(t)(t.name, t.dims, "float32", False) for u in program.tensors]
            yield program.replace(tensors=plainer), calls
    for size in ("A", "B", "C"):
        for value in (2, 3):
            variants = [{**v, size: min(v[size], value)} for v in program.variants]
            if variants != program.variants:
                yield program.replace(variants=variants), calls


def shrink(program: Program, kind: str, cache=None, executors=None, calls=None, budget: int = 300):
    """The smallest (program, calls) found whose outcome has ``kind``; ``budget`` bounds the runs tried."""
    calls = list(calls if calls is not None else calls_for(program, cache))
    outcome = run_program(program, cache, executors, calls)
    if outcome.kind != kind:
        return program, calls
    failing_call = outcome.call or 0
    progress = True
    while progress and budget > 0:
        progress = False
        for candidate, candidate_calls in _candidates(program, calls, failing_call):
            if not _well_formed(candidate):
                continue
            budget -= 1
            if budget <= 0:
                break
            try:
                result = run_program(candidate, cache, executors, candidate_calls)
            except Exception:  # a simplification that breaks the runner itself is no simplification
                continue
            if result.kind == kind:
                program, calls, failing_call = candidate, candidate_calls, result.call or 0
                progress = True
                break
    return program, calls
