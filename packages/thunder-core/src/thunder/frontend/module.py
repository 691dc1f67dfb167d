"""``thunder.jit(module)``: a module that runs the original's forward through thunder.

Parameters and buffers stay where they are (the original module owns them) and are reached by the
prologue through attribute paths on every call, so ``load_state_dict``, optimizers and ``.to()`` act
on the same tensors eager would use.
"""

from __future__ import annotations

import torch

from thunder.frontend.jit import ThunderFunction

__all__ = ["ThunderModule"]


class ThunderModule(torch.nn.Module):
    def __init__(self, model: torch.nn.Module, **jit_options):
        super().__init__()
        self._model = model
        # The interpreter reaches the module as the called object itself (provenance "fn"), and its
        # parameters through attribute paths from there.
        self._tfn = ThunderFunction(model, **jit_options)

    def forward(self, *args, **kwargs):
        return self._tfn(*args, **kwargs)

    # Skip nn.Module.__call__'s hook machinery on the hot path; hooks on the original module are honoured
    # when traced.
    def __call__(self, *args, **kwargs):
        return self._tfn(*args, **kwargs)

    def __getattr__(self, name: str):
        if name in ("_model", "_tfn"):
            return super().__getattr__(name)
        return getattr(self._model, name)

    # The state is the original module's: same names, same tensors.
    def state_dict(self, *args, **kwargs):
        return self._model.state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self._model.load_state_dict(*args, **kwargs)

    def named_parameters(self, *args, **kwargs):
        return self._model.named_parameters(*args, **kwargs)

    def named_buffers(self, *args, **kwargs):
        return self._model.named_buffers(*args, **kwargs)

    def named_modules(self, *args, **kwargs):
        return self._model.named_modules(*args, **kwargs)

    def named_children(self, *args, **kwargs):
        return self._model.named_children(*args, **kwargs)

    def train(self, mode: bool = True):
        self._model.train(mode)
        self.training = mode
        return self

    def __repr__(self) -> str:
        return f"ThunderModule({self._model!r})"
