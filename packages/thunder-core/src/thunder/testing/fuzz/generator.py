"""Draws a random program for a seed, statement by statement, keeping what eager PyTorch accepts.

Shapes and dtypes are tracked by running eager: every candidate statement is executed, after the statements kept so
far, on the arguments of every call the runner will make (each size variant, each outside state). A statement
eager rejects is dropped, except that now and then one ends the program, so that thunder's exceptions are checked
against eager's too.
"""

from __future__ import annotations

import random
import warnings

from thunder.testing.fuzz.ops import OPS
from thunder.testing.fuzz.program import GLOBAL_STATES, NumberInput, Program, TensorInput, default_calls, make_args
from thunder.testing.fuzz.scope import Scope, Var

__all__ = ["generate", "run_eager_locals"]

SIZE_NAMES = ("A", "B", "C")
DTYPE_WEIGHTS = {"float32": 10, "float64": 2, "bfloat16": 1.5, "int64": 3, "bool": 2}
RAISING_LAST_STATEMENT = 0.04  # how often a statement eager rejects is kept as the program's end


def run_eager_locals(program: Program, call) -> dict:
    """Runs the program's body in eager for one call and returns its local variables (raises what eager raises)."""
    namespace = {}
    source = program.replace(returns=[]).source().replace("    return None\n", "    return dict(locals())\n")
    exec(compile(source, "<fuzz>", "exec"), namespace)
    namespace.update(GLOBAL_STATES[call.state])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return namespace["fn"](*make_args(program, call))


def _draw_inputs(rng: random.Random, grad_fraction: float):
    tensors = []
    first = None
    for i in range(rng.choice([1, 1, 2, 2, 2, 3])):
        if first is None or rng.random() < 0.3:
            rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
            dims = tuple(rng.choice(SIZE_NAMES + (1,)) if rng.random() < 0.15 else rng.choice(SIZE_NAMES)
                         for _ in range(rank))
        else:  # broadcastable with the first input: a suffix of its dims, some set to 1
            dims = first[rng.randrange(len(first) + 1):] if rng.random() < 0.5 else first
            dims = tuple(1 if rng.random() < 0.15 else d for d in dims)
        first = first if first is not None else dims
        dtype = rng.choices(list(DTYPE_WEIGHTS), weights=list(DTYPE_WEIGHTS.values()))[0]
        requires_grad = dtype in ("float32", "float64") and rng.random() < grad_fraction
        tensors.append(TensorInput(f"t{i}", dims, dtype, requires_grad))
    numbers = []
    if rng.random() < 0.5:
        numbers.append(NumberInput("n0", "int"))
    if rng.random() < 0.3:
        numbers.append(NumberInput("f0", "float"))
    return tensors, numbers


def _draw_variants(rng: random.Random, numbers) -> list:
    """Variant 0 is the first call; 1 changes only the numbers; 2 changes the sizes too."""
    first = {name: rng.randint(2, 5) for name in SIZE_NAMES}
    second = {name: rng.choice([s for s in range(2, 7) if s != first[name]]) for name in SIZE_NAMES}

    def numbers_of():
        return {n.name: rng.randint(1, 6) if n.kind == "int" else round(rng.uniform(-2, 2), 2) for n in numbers}

    nums0, nums1 = numbers_of(), numbers_of()
    return [{**first, **nums0}, {**first, **nums1}, {**second, **nums1}]


def _eager_accepts(program: Program, calls) -> bool:
    try:
        for call in calls:
            run_eager_locals(program, call)
    except Exception:
        return False
    return True


def _scope_variables(program: Program, calls) -> list:
    values = run_eager_locals(program, calls[0])
    inputs = set(program.params)
    return [Var(name, value, name in inputs) for name, value in values.items()]


def generate(seed: int, *, max_statements: int = 12, grad_fraction: float = 0.0, ops=OPS) -> Program:
    rng = random.Random(seed)
    tensors, numbers = _draw_inputs(rng, grad_fraction)
    program = Program(seed, tensors, numbers, _draw_variants(rng, numbers), [], [])
    calls = default_calls(len(program.variants))
    target = rng.randint(3, max_statements)
    weights = [op.weight for op in ops]
    counter = 0
    for _attempt in range(target * 4):
        if len(program.body) >= target:
            break
        variables = _scope_variables(program, calls)
        scope = Scope(rng, variables, counter)
        op = rng.choices(ops, weights=weights)[0]
        statement = op.build(scope)
        if statement is None:
            continue
        candidate = program.replace(body=program.body + [statement])
        if _eager_accepts(candidate, calls):
            program, counter = candidate, scope.counter
        elif rng.random() < RAISING_LAST_STATEMENT:
            program = candidate
            break
    return program.replace(returns=_draw_returns(rng, program, calls))


def _draw_returns(rng: random.Random, program: Program, calls) -> list:
    try:
        values = run_eager_locals(program.replace(body=program.body[:-1]) if not _eager_accepts(program, calls)
                                  else program, calls[0])
    except Exception:
        return []
    defined = [name for name in values if name not in program.params]
    if not defined:
        return [program.params[0]] if program.params else []
    returns = [defined[-1]]
    others = [n for n in defined[:-1] + program.params if n not in returns]
    returns += rng.sample(others, min(len(others), rng.choice([0, 0, 1, 2])))
    return returns
