"""What a generated program is: its inputs, the sizes and numbers of each call variant, its body, and its source."""

from __future__ import annotations

import dataclasses
import textwrap

import torch

__all__ = ["Call", "NumberInput", "Program", "TensorInput", "default_calls", "make_args", "GLOBAL_STATES"]

# Outside state a program may read; the caller switches state between calls (see ``default_calls``).
GLOBAL_STATES = ({"G": 0.5, "FLAG": True}, {"G": -1.5, "FLAG": False})

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "int64": torch.int64,
          "bool": torch.bool}


@dataclasses.dataclass
class TensorInput:
    name: str
    dims: tuple  # each a size name ("A", "B", "C") or the int 1
    dtype: str  # a key of DTYPES
    requires_grad: bool = False


@dataclasses.dataclass
class NumberInput:
    name: str
    kind: str  # "int" or "float"


@dataclasses.dataclass(frozen=True)
class Call:
    variant: int  # index into Program.variants: the sizes and numbers of this call
    values: int  # seed of the tensor values
    state: int  # index into GLOBAL_STATES
    # the caller multiplies the first output that requires grad by 2 in place before the backward (eager's graph
    # then checks the versions of what it saved, and refuses some views)
    updates_output: bool = False


@dataclasses.dataclass
class Program:
    seed: int
    tensors: list
    numbers: list
    # each variant: {"A": 3, "B": 4, ..., "n0": 2, "f0": 0.5}: the sizes and the number inputs of one call shape
    variants: list
    body: list  # statements, each a (possibly multi-line) block of source
    returns: list  # names returned as a tuple

    @property
    def params(self) -> list:
        return [t.name for t in self.tensors] + [n.name for n in self.numbers]

    def describe_inputs(self) -> str:
        """The inputs of the first call, e.g. ``t0: float32 (A=3, B=4) requires_grad; n0 = 2``."""
        first = self.variants[0]
        parts = [f"{t.name}: {t.dtype} ({', '.join(f'{d}={first[d]}' if isinstance(d, str) else str(d) for d in t.dims)})"
                 + (" requires_grad" if t.requires_grad else "") for t in self.tensors]
        parts += [f"{n.name} = {first[n.name]!r}" for n in self.numbers]
        return "; ".join(parts)

    def source(self) -> str:
        """The program as a module: the outside state it reads, then ``fn``."""
        state = "".join(f"{k} = {v!r}\n" for k, v in GLOBAL_STATES[0].items())
        body = "".join(textwrap.indent(stmt, "    ") + "\n" for stmt in self.body)
        returned = ", ".join(self.returns) + ("," if len(self.returns) == 1 else "") if self.returns else "None"
        ret = f"    return {returned}\n"
        header = f"def fn({', '.join(self.params)}):  # first call: {self.describe_inputs()}\n"
        return f"import torch\n\n{state}LOG = []\n\n\n{header}{body}{ret}"

    def replace(self, **changes) -> Program:
        return dataclasses.replace(self, **changes)


def default_calls(variants: int, checks_inputs: bool = True) -> list:
    """The calls each program gets: new values (the caller then updates an output in place before the backward),
    new numbers, new sizes, then changed outside state.

    Without input checks (cache="same input") every call must match the first, so only the values change."""
    if not checks_inputs:
        return [Call(0, 0, 0), Call(0, 1, 0, updates_output=True)]
    calls = [Call(0, 0, 0), Call(0, 1, 0, updates_output=True)]
    calls += [Call(v, 1 + v, 0) for v in range(1, variants)]
    calls += [Call(0, 10, 1), Call(variants - 1, 11, 1)]
    return calls


def make_tensor(spec: TensorInput, sizes: dict, generator: torch.Generator) -> torch.Tensor:
    shape = tuple(sizes[d] if isinstance(d, str) else d for d in spec.dims)
    dtype = DTYPES[spec.dtype]
    if dtype == torch.bool:
        t = torch.rand(shape, generator=generator) > 0.5
    elif dtype == torch.int64:
        t = torch.randint(-5, 6, shape, generator=generator)
    else:
        t = torch.randn(shape, generator=generator, dtype=torch.float64).to(dtype)
    return t.requires_grad_(spec.requires_grad)


def make_args(program: Program, call: Call) -> list:
    """Fresh arguments of one call (tensors from a generator seeded by the program and the call)."""
    generator = torch.Generator().manual_seed(program.seed * 1000 + call.values)
    variant = program.variants[call.variant]
    tensors = [make_tensor(t, variant, generator) for t in program.tensors]
    return tensors + [variant[n.name] for n in program.numbers]
