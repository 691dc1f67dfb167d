"""Recipes and compile plugins: ``thunder.compile(model, recipe=..., plugins=...)``.

A *recipe* is a complete way to compile a model: the transforms, executors and jit options it needs. A
*compile plugin* adds to a recipe (distributed training, reduced overhead, quantization, ...). Both are
lightning-thunder's user-facing interface. They are not the *extension plugins* of :mod:`thunder.plugins`
(pluggy hooks through which packages provide executors): a compile plugin chooses among what the extension
plugins installed.
"""

from __future__ import annotations

import enum

__all__ = ["Recipe", "Plugin", "PluginPolicy", "Lookaside", "Interpreter", "recipe_registry"]


class Lookaside:
    """While the program is interpreted, calls of ``fn`` run ``replace_with`` instead (natively, on proxies)."""

    def __init__(self, fn, replace_with):
        self._fn, self._replace_with = fn, replace_with


class PluginPolicy(enum.Enum):
    PRE = enum.auto()  # the plugin's transforms, executors and lookasides come before the recipe's
    POST = enum.auto()  # ... after them


class Plugin:
    """A compile plugin: what it adds to the recipe it is used with. Every method is optional."""

    policy: PluginPolicy = PluginPolicy.PRE

    def setup_model(self, model):
        """The model to compile instead of ``model`` (e.g. prepared for distributed training); runs first."""
        return model

    def setup_lookasides(self) -> list[Lookaside] | None:
        return None

    def setup_transforms(self) -> list | None:
        return None

    def setup_executors(self) -> list | None:
        return None


class Interpreter(enum.Enum):
    THUNDER_JIT = enum.auto()  # thunder.jit interprets the whole program
    THUNDER_FX = enum.auto()  # torch.compile captures graphs, thunder compiles each (thunder.dynamo)


_INTERPRETERS = {"thunder.jit": Interpreter.THUNDER_JIT, "thunder.fx": Interpreter.THUNDER_FX}

# class path (module.Class, or a prefix of it) -> recipe class that "auto" picks for models of that class;
# "" is the fallback
recipe_registry: dict[str, type] = {}


class Recipe:
    def __init__(self, plugins=None, interpreter: Interpreter | str = Interpreter.THUNDER_JIT):
        self.plugins = list(plugins) if plugins is not None else []
        if isinstance(interpreter, str):
            if interpreter not in _INTERPRETERS:
                raise ValueError(f"unknown interpreter {interpreter!r}; the interpreters are "
                                 f"{', '.join(map(repr, _INTERPRETERS))}")
            interpreter = _INTERPRETERS[interpreter]
        self.interpreter = interpreter
        self.lookasides, self.transforms, self.executors, self.config = [], [], [], {}

    def add_plugins(self, plugins) -> None:
        self.plugins.extend(plugins)

    @classmethod
    def validate(cls, model) -> None:
        """Raises (or warns) when the recipe does not apply to ``model``."""

    def setup_lookasides(self) -> list[Lookaside] | None:
        return None

    def setup_transforms(self) -> list | None:
        return None

    def setup_executors(self) -> list:
        return []

    def setup_config(self) -> dict:
        """Further keyword arguments of thunder.jit (or of ThunderCompiler under the "thunder.fx" interpreter)."""
        return {}

    @classmethod
    def register(cls, key: str):
        """Class decorator: ``@Recipe.register("transformers")`` makes "auto" pick the recipe for models whose class
        path starts with the key ("" registers the fallback)."""

        def decorator(recipe_cls):
            recipe_registry[key] = recipe_cls
            return recipe_cls

        return decorator

    @classmethod
    def get_for_model(cls, model) -> Recipe:
        parts = f"{type(model).__module__}.{type(model).__name__}".split(".")
        for i in range(len(parts), 0, -1):
            recipe_cls = recipe_registry.get(".".join(parts[:i]))
            if recipe_cls is not None:
                return recipe_cls()
        if "" not in recipe_registry:
            raise RuntimeError("no recipe applies to this model and no fallback recipe is registered")
        return recipe_registry[""]()

    def _collect(self, method: str) -> list:
        """The plugins' and the recipe's contributions, PRE plugins first, then the recipe, then POST plugins."""
        pre = [p for p in self.plugins if p.policy is PluginPolicy.PRE]
        post = [p for p in self.plugins if p.policy is PluginPolicy.POST]
        found = []
        for source in (*pre, self, *post):
            found.extend(getattr(source, method)() or [])
        return found

    def apply(self, model):
        """Compiles ``model`` (an nn.Module or a function) as the recipe and its plugins say."""
        self.validate(model)
        for plugin in self.plugins:
            model = plugin.setup_model(model)
        self.config = self.setup_config()
        self.lookasides = self._collect("setup_lookasides")
        self.transforms = self._collect("setup_transforms")
        self.executors = self._collect("setup_executors")
        if self.interpreter is Interpreter.THUNDER_FX:
            if self.lookasides:
                raise ValueError("lookasides need the thunder.jit interpreter; torch.compile (thunder.fx) "
                                 "captures the program itself")
            import torch

            from thunder.dynamo import ThunderCompiler

            return torch.compile(model, backend=ThunderCompiler(**self._jit_options()))
        import thunder

        jitted = thunder.jit(model, **self._jit_options())
        function = jitted._tfn if isinstance(jitted, thunder.ThunderModule) else jitted
        function.lookasides.update((la._fn, la._replace_with) for la in self.lookasides)
        return jitted

    def _jit_options(self) -> dict:
        from thunder.extend import get_default_executors

        options = dict(self.config)
        if self.transforms:
            options["transforms"] = self.transforms
        if self.executors:  # the recipe's and plugins' executors first, then the usual defaults
            chosen = list(dict.fromkeys([*self.executors, *get_default_executors()]))
            options["executors"] = chosen
        return options
