"""``thunder.jit(module)``: a module that runs the original's forward through thunder.

Parameters and buffers stay where they are (the original module owns them) and are reached by the
prologue through attribute paths on every call, so ``load_state_dict``, optimizers and ``.to()`` act
on the same tensors eager would use.
"""

from __future__ import annotations

import functools
import types

import torch

from thunder.distributed.boundaries import engine_boundary
from thunder.frontend.jit import ThunderFunction

__all__ = ["ThunderModule"]


class ThunderModule(torch.nn.Module):
    def __init__(self, model: torch.nn.Module, **jit_options):
        super().__init__()
        self._model = model
        # The interpreter reaches the module as the called object itself (provenance "fn"), and its
        # parameters through attribute paths from there.
        # A model driven by torch.distributed's engine (DDP, FSDP2) runs the engine natively around jitted parts
        engine = engine_boundary(model, jit_options)
        self._tfn = ThunderFunction(model, **jit_options) if engine is None else engine.functions[0]
        self._run = self._tfn if engine is None else engine
        # forward has the original's signature: callers such as HF generate() pick the arguments they pass
        # from inspect.signature(self.forward)
        self.__dict__["forward"] = functools.wraps(model.forward)(self._run)
        for transform in self._tfn.transform_objects:
            transform.transform_module(self)

    def forward(self, *args, **kwargs):
        return self._run(*args, **kwargs)

    # Skip nn.Module.__call__'s hook machinery on the hot path; hooks on the original module are honoured
    # when traced.
    def __call__(self, *args, **kwargs):
        return self._run(*args, **kwargs)

    def __getattr__(self, name: str):
        if name in ("_model", "_tfn", "_view"):
            return super().__getattr__(name)
        # A method of the original's class (generate(), a helper it calls) is bound to this module, so that its
        # self(...) and self.forward(...) run the jitted forward; its other attribute reads come back here.
        method = getattr(type(self._model), name, None)
        if isinstance(method, types.FunctionType) and name not in vars(self._model):
            return getattr(self._jitted_view(), name)
        return getattr(self._model, name)

    def _jitted_view(self):
        """The original module seen through a subclass of its class whose ``__call__`` and ``forward`` run the
        jitted forward. It shares the original's ``__dict__``, so its methods read and write the original's
        state as eager would, and ``isinstance``, ``type(self).method`` and ``super()`` in them work."""
        view = self.__dict__.get("_view")
        if view is None:
            model, tfn = self._model, self._run

            @functools.wraps(type(model).forward)
            def forward(_view, *args, **kwargs):
                return tfn(*args, **kwargs)

            cls = type(type(model).__name__, (type(model),), {"__call__": forward, "forward": forward,
                                                                "__module__": type(model).__module__})
            view = object.__new__(cls)
            view.__dict__ = model.__dict__  # the same dict object: one state, two classes
            self.__dict__["_view"] = view
        return view

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
