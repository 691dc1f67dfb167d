"""The "hf-transformers" recipe: the default recipe for Hugging Face ``transformers`` models."""

from __future__ import annotations

from thunder.recipes.base import BaseRecipe
from thunder.recipes.recipe import Recipe

__all__ = ["HFTransformers"]


@Recipe.register("hf-transformers")
class HFTransformers(BaseRecipe):
    """The default recipe, for ``transformers.PreTrainedModel`` instances only. ``generate()`` and the model's
    other methods run the compiled forward (ThunderModule binds them to it), so no patching is needed; the
    lookasides and kv-cache transforms lightning-thunder adds here work around limits of its interpreter that
    thunder.jit does not have (docs/coming-from-lightning-thunder.md)."""

    def __init__(self, show_progress: bool = False, interpreter="thunder.jit", plugins=None):
        super().__init__(show_progress=show_progress, interpreter=interpreter, plugins=plugins)

    @classmethod
    def validate(cls, model) -> None:
        import transformers

        if not isinstance(model, transformers.PreTrainedModel):
            raise ValueError(f"the hf-transformers recipe compiles transformers.PreTrainedModel instances, got "
                             f"{type(model).__name__}")
