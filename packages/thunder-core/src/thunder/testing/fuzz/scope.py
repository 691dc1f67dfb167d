"""What a statement builder can see: the variables defined so far (as eager computed them for the first call)."""

from __future__ import annotations

import dataclasses
import random

import torch

__all__ = ["Scope", "Var"]

FLOATS = (torch.float32, torch.float64, torch.bfloat16)


@dataclasses.dataclass
class Var:
    name: str
    value: object  # the value in the first call variant
    is_input: bool = False

    @property
    def is_tensor(self) -> bool:
        return isinstance(self.value, torch.Tensor)

    @property
    def rank(self) -> int:
        return self.value.dim() if self.is_tensor else -1

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape)

    @property
    def dtype(self):
        return self.value.dtype if self.is_tensor else None

    @property
    def is_float(self) -> bool:
        return self.is_tensor and self.value.dtype in FLOATS

    @property
    def is_int(self) -> bool:
        return self.is_tensor and self.value.dtype == torch.int64

    @property
    def is_bool(self) -> bool:
        return self.is_tensor and self.value.dtype == torch.bool


class Scope:
    def __init__(self, rng: random.Random, variables: list, counter: int):
        self.rng = rng
        self.vars = variables
        self.counter = counter  # the next fresh variable is v<counter>

    def fresh(self) -> str:
        name = f"v{self.counter}"
        self.counter += 1
        return name

    def tensor(self, pred=lambda v: True) -> Var | None:
        """A tensor variable satisfying ``pred``, recent ones preferred (so statements build on each other)."""
        found = [v for v in self.vars if v.is_tensor and pred(v)]
        if not found:
            return None
        # bias to the most recent: pick among the last few half of the time
        if self.rng.random() < 0.5:
            found = found[-3:]
        return self.rng.choice(found)

    def two_tensors(self, pred=lambda a, b: True):
        tensors = [v for v in self.vars if v.is_tensor]
        pairs = [(a, b) for a in tensors for b in tensors if pred(a, b)]
        return self.rng.choice(pairs) if pairs else (None, None)

    def numbers(self, kinds=(int, float)) -> list:
        return [v for v in self.vars if type(v.value) in kinds]

    def int_expr(self) -> str:
        """A small int: a literal, an int variable, or a size of a tensor."""
        choices = [str(self.rng.choice([1, 2, 3]))]
        choices += [v.name for v in self.numbers((int,)) if 0 <= v.value <= 8]
        sized = [v for v in self.vars if v.is_tensor and v.rank > 0]
        if sized:
            v = self.rng.choice(sized)
            choices.append(f"{v.name}.shape[{self.rng.randrange(-v.rank, v.rank)}]")
        return self.rng.choice(choices)

    def scalar_expr(self) -> str:
        """A Python number operand: a literal, a number variable or the global G."""
        choices = [repr(self.rng.choice([2, -1, 0.5, 3.0, 1e-3]))]
        choices += [v.name for v in self.numbers() if abs(v.value) < 100]
        choices.append("G")
        return self.rng.choice(choices)

    def dim(self, v: Var) -> int:
        return self.rng.randrange(-v.rank, v.rank)
