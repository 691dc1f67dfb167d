"""``thunder.DebugOptions`` and the jit options kept for lightning-thunder code.

Debug options are registered, not hard-coded: any module may add one with
``DebugOptions.register_option(name, type, default, doc)`` and read it from the ``debug_options`` of the
jitted callable. An option a user passes that nobody registered is an error naming it.
"""

from __future__ import annotations

__all__ = ["DebugOptions", "resolve_cache_alias", "resolve_langctx"]


class DebugOptions:
    """DebugOptions(**options): switches that help debugging a jitted program.

    The registered options are listed by ``DebugOptions.list_options()``.
    """

    _defaults: dict = {}
    _types: dict = {}
    _docs: dict = {}

    def __init__(self, **options):
        cls = type(self)
        unknown = sorted(set(options) - set(cls._defaults))
        if unknown:
            raise TypeError(f"unknown debug option(s) for {cls.__name__}: {', '.join(unknown)}; the registered "
                            f"options are: {', '.join(sorted(cls._defaults)) or 'none'}")
        for name, default in cls._defaults.items():
            value = options.get(name, default)
            if not isinstance(value, cls._types[name]):
                raise TypeError(f"{cls.__name__}.{name} needs a value of type {_type_name(cls._types[name])}, "
                                f"got {type(value).__name__}")
            setattr(self, name, value)

    @classmethod
    def register_option(cls, name: str, typ, default, doc: str = "") -> None:
        if name in cls._defaults or hasattr(cls, name):
            raise AttributeError(f"{cls.__name__}.{name} is already registered")
        if not isinstance(default, typ):
            raise TypeError(f"the default of {cls.__name__}.{name} must be of type {_type_name(typ)}")
        cls._defaults[name], cls._types[name], cls._docs[name] = default, typ, doc
        setattr(cls, name, default)
        cls.__doc__ = (f"{cls.__name__}(**options): switches that help debugging a jitted program.\n\n"
                       f"Registered options:\n\n    " + cls.list_options().replace("\n", "\n    "))

    @classmethod
    def list_options(cls) -> str:
        return "\n".join(f"{name}: {_type_name(cls._types[name])} = {cls._defaults[name]!r}  {cls._docs[name]}"
                         for name in sorted(cls._defaults))

    def __repr__(self) -> str:
        changed = [f"{n}={getattr(self, n)!r}" for n in self._defaults if getattr(self, n) != self._defaults[n]]
        return f"{type(self).__name__}({', '.join(changed)})"


def _type_name(typ) -> str:
    return getattr(typ, "__name__", str(typ))


DebugOptions.register_option(
    "check_traces", bool, False,
    "check that every trace of a compilation prints as Python that compiles, and that the traces that run use "
    "each value only while it is defined (raises AssertionError naming the step that made the trace)")


def resolve_cache_alias(cache, cache_mode):
    """``cache_mode=`` is lightning-thunder's older spelling of ``cache=``."""
    if cache_mode is None:
        return cache
    if cache is not None and cache != cache_mode:
        raise ValueError(f"cache={cache!r} and cache_mode={cache_mode!r} disagree; cache_mode is an alias of cache, "
                         "pass only cache=")
    return cache_mode


def resolve_langctx(langctx) -> None:
    """Only the torch language is a front end of thunder.jit here."""
    if langctx not in (None, "torch"):
        raise ValueError(f"langctx={langctx!r} is not supported: thunder.jit interprets PyTorch programs only "
                         "(langctx=None or 'torch')")
