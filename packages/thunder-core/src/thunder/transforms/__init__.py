"""Trace transforms, one module each. Every transform takes a trace and returns a new one whose
provenance says what was done and how long it took.

The user-facing :class:`thunder.Transform` subclasses are importable from here, as in lightning-thunder
(``from thunder.transforms import ConstantFolding``); they are loaded on first use.
"""

_USER_TRANSFORMS = {
    "Transform": "thunder.transforms.transform",
    "ConstantFolding": "thunder.transforms.constant_folding",
    "PrunePrologueChecks": "thunder.transforms.prune_prologue_checks",
    "MaterializationTransform": "thunder.transforms.materialization",
}

_NOT_PROVIDED = {
    "LORATransform": "LoRA adapters need per-module parameter overrides inside ThunderModule, which thunder.jit does "
                     "not have (its parameters are the original module's); add adapters to the model itself, e.g. with "
                     "the peft package, and jit the result",
    "ExtractionOnlyPrologueTransform": "it drops all prologue checks; PrunePrologueChecks(prune_all_checks=True) "
                                       "does that here",
}


def __getattr__(name: str):
    if name in _USER_TRANSFORMS:
        import importlib

        value = getattr(importlib.import_module(_USER_TRANSFORMS[name]), name)
        globals()[name] = value
        return value
    if name in _NOT_PROVIDED:
        # ImportError, not AttributeError: ``from thunder.transforms import LORATransform`` shows this message
        # (an AttributeError would be replaced by a bare "cannot import name")
        raise ImportError(f"thunder.transforms.{name} is not provided: {_NOT_PROVIDED[name]} "
                             "(docs/coming-from-lightning-thunder.md)")
    raise AttributeError(f"module 'thunder.transforms' has no attribute {name!r}")
