"""Recipes and compile plugins (lightning-thunder's ``thunder.compile`` interface).

Imported on first use of ``thunder.compile``; ``import thunder`` does not load it.
"""

from thunder.recipes import hf_transformers as _hf_transformers  # noqa: F401  (registers "hf-transformers")
from thunder.recipes.base import BaseRecipe
from thunder.recipes.compile import compile, get_recipe_class, get_recipes, register_recipe
from thunder.recipes.hf_transformers import HFTransformers
from thunder.recipes.plugins import get_plugin, get_plugin_names, names_to_plugins, register_plugin
from thunder.recipes.recipe import Interpreter, Lookaside, Plugin, PluginPolicy, Recipe

__all__ = ["Recipe", "Plugin", "PluginPolicy", "Lookaside", "Interpreter", "BaseRecipe", "HFTransformers",
           "compile", "get_recipe_class", "get_recipes", "register_recipe", "get_plugin", "get_plugin_names",
           "names_to_plugins", "register_plugin"]
