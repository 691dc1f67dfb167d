"""``thunder.compile(model, recipe=..., plugins=...)``: compile with a recipe and compile plugins."""

from __future__ import annotations

from thunder.recipes.plugins import get_plugin, get_plugin_names
from thunder.recipes.recipe import Recipe, recipe_registry

__all__ = ["compile", "get_recipe_class", "get_recipes", "register_recipe"]


def _key(name: str) -> str:
    return "" if name == "default" else name  # the fallback recipe is registered under ""


def get_recipe_class(name: str) -> type | None:
    return recipe_registry.get(_key(name)) if name else None


def get_recipes() -> list[str]:
    return ["default" if key == "" else key for key in recipe_registry]


def register_recipe(name: str, cls: type) -> None:
    if name == "auto":
        raise ValueError("the recipe name 'auto' is reserved")
    recipe_registry[_key(name)] = cls


def _plugin(plugin):
    if not isinstance(plugin, str):
        return plugin
    cls = get_plugin(plugin)
    if cls is None:
        raise ValueError(f"unknown plugin {plugin!r}; the plugins are {', '.join(map(repr, get_plugin_names()))}")
    return cls()


def compile(fn, recipe: Recipe | str | None = "auto", plugins=None):
    """Compiles ``fn`` (an nn.Module or a function). ``recipe``: "auto" (the recipe registered for the model's
    class, else "default"), "default", "hf-transformers", a registered name, or a :class:`thunder.Recipe`.
    ``plugins``: compile plugins (names or :class:`thunder.Plugin` objects), e.g. "ddp"."""
    if plugins is None:
        plugins = []
    elif not isinstance(plugins, (list, tuple)):
        plugins = [plugins]
    plugins = [_plugin(p) for p in plugins]
    if recipe is None:
        recipe = "default"
    if recipe == "auto":
        recipe = Recipe.get_for_model(fn)
    elif isinstance(recipe, str):
        cls = get_recipe_class(recipe)
        if cls is None:
            raise ValueError(f"unknown recipe {recipe!r}; the recipes are {', '.join(map(repr, get_recipes()))}")
        recipe = cls()
    recipe.add_plugins(plugins)
    return recipe.apply(fn)
