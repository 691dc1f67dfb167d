"""The "default" recipe: thunder.jit with the default executors, optionally led by a chosen fusion executor."""

from __future__ import annotations

import warnings

from thunder.recipes.recipe import Recipe

__all__ = ["BaseRecipe"]

# lightning-thunder's fuser names -> the executor providing that fusion here
_FUSERS = {"nvfuser": "nvfuser", "torch.compile": "inductor"}


@Recipe.register("")
class BaseRecipe(Recipe):
    """thunder.jit with the default executors. ``fuser`` ("nvfuser" or "torch.compile", the latter served by
    the thunder-inductor executor) puts that fusion executor first when it is installed and available; a missing
    nvFuser falls back to the default executors with a warning, as lightning-thunder does, a missing
    torch.compile executor is an error."""

    def __init__(self, show_progress: bool = False, fuser: str | None = "nvfuser", interpreter="thunder.jit",
                 plugins=None):
        super().__init__(plugins=plugins, interpreter=interpreter)
        if show_progress:
            raise ValueError("show_progress=True is not provided: thunder's interpreter has no progress display")
        if fuser is None:
            import torch

            fuser = "nvfuser" if torch.cuda.is_available() else "torch.compile"
        if fuser not in _FUSERS:
            raise NotImplementedError(f"unknown fuser {fuser!r}; the fusers are {', '.join(map(repr, _FUSERS))}")
        self.fuser = fuser
        self.executor_names = [_FUSERS[fuser]]

    def setup_executors(self) -> list:
        from thunder.extend import get_executor

        executors = []
        for name in self.executor_names:
            ex = get_executor(name)
            available, reason = ex.availability() if ex is not None else (False, "its package is not installed")
            if available:
                executors.append(ex)
            elif name == "nvfuser":
                warnings.warn(f"the recipe asked for nvFuser, which is not available ({reason}); compiling with the "
                              "default executors (pip install thunder-nvfuser on a CUDA machine to use it)",
                              stacklevel=3)
            else:
                raise ValueError(f"executor {name!r} was specified in the recipe but is not available: {reason}")
        return executors
