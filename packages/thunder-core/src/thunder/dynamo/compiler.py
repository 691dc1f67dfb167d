"""``ThunderCompiler`` (a ``torch.compile`` backend) and ``thunderfx`` (torch.compile with it).

Each graph Dynamo captures is checked call by call (:mod:`thunder.dynamo.splitter`). A graph thunder takes
whole is compiled by ``thunder.jit``; otherwise it is split into regions, thunder's compiled by thunder.jit and
the others by TorchInductor, and ``subgraph_infos[i].split_reasons`` says which calls left thunder and why.
"""

from __future__ import annotations

import warnings

import torch

from thunder.dynamo.splitter import SubgraphInfo, find_unsupported, split_for_thunder

__all__ = ["ThunderCompiler", "ThunderFXCompiledObject", "thunderfx", "thunder_backend"]


class ThunderCompiler:
    """A Dynamo backend: ``torch.compile(fn, backend=ThunderCompiler(**jit_options))``; the options go to
    thunder.jit. ``subgraph_infos`` lists what became of each captured graph, in capture order."""

    def __init__(self, **thunder_options):
        self.thunder_options = thunder_options
        self.subgraph_infos: list[SubgraphInfo] = []

    def _jit(self, gm):
        import thunder

        # Dynamo's graph modules generate their forward lazily, on first call, by setting attributes on
        # themselves; generate it now so that tracing reads the module instead of mutating it.
        real_recompile = getattr(gm, "real_recompile", None)
        if real_recompile is not None:
            real_recompile()
        return thunder.jit(gm, **self.thunder_options)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs, **kwargs):
        unsupported = find_unsupported(gm)
        if not unsupported:
            compiled = self._jit(gm)
            self.subgraph_infos.append(SubgraphInfo(gm, None, None, [compiled], {gm: compiled}, []))
            return compiled
        original_split, thunder_parts = split_for_thunder(gm, unsupported)
        split = torch.fx.GraphModule(original_split, original_split.graph)  # the one whose submodules are replaced
        thunder_fns, compiled_of = [], {}
        for name, takes in thunder_parts.items():
            sub = getattr(original_split, name)
            compiled = self._jit(sub) if takes else _LazyInductor(sub)
            if takes:
                thunder_fns.append(compiled)
            compiled_of[sub] = compiled
            setattr(split, name, compiled)
        split.recompile()
        self.subgraph_infos.append(SubgraphInfo(gm, original_split, split, thunder_fns, compiled_of,
                                                list(unsupported.values())))
        return split


class _LazyInductor(torch.nn.Module):
    """A region thunder does not take, compiled by TorchInductor on its first call (with that call's inputs)."""

    def __init__(self, gm):
        super().__init__()
        self.gm = gm
        self.compiled = None

    def forward(self, *args):
        if self.compiled is None:
            from torch._inductor import compile as inductor_compile

            self.compiled = inductor_compile(self.gm, list(args))
        return self.compiled(*args)


def thunder_backend(gm, example_inputs, **kwargs):
    """``backend="thunder"`` (registered through thunder-core's ``torch_dynamo_backends`` entry point)."""
    return ThunderCompiler()(gm, example_inputs, **kwargs)


class ThunderFXCompiledObject:
    """What :func:`thunderfx` returns: the torch.compile'd callable, with thunder's traces of its regions."""

    def __init__(self, backend: ThunderCompiler, func):
        self._backend = backend
        self._func = func

    def __call__(self, *args, **kwargs):
        return self._func(*args, **kwargs)

    def _traces(self, which) -> list:
        if not self._backend.subgraph_infos:
            warnings.warn("call the function before asking for its traces", stacklevel=3)
        found = []
        for info in self._backend.subgraph_infos:
            for fn in info.thunder_compiled_fns:
                traces = which(fn)
                if traces:
                    found.append(traces[-1])
        return found

    @property
    def last_traces(self) -> list:
        """The final forward trace of each thunder region."""
        import thunder

        return self._traces(thunder.last_traces)

    @property
    def last_backward_traces(self) -> list:
        """The final backward trace of each thunder region that has one."""
        import thunder

        return self._traces(thunder.last_backward_traces)


_TORCH_COMPILE_OPTIONS = frozenset({"fullgraph", "dynamic", "mode", "options", "disable"})


def thunderfx(fn, /, **kwargs) -> ThunderFXCompiledObject:
    """``torch.compile(fn, backend=ThunderCompiler(...))``: keyword arguments torch.compile knows (fullgraph,
    dynamic, mode, options, disable) go to it, the others to thunder.jit."""
    compile_options = {k: v for k, v in kwargs.items() if k in _TORCH_COMPILE_OPTIONS}
    backend = ThunderCompiler(**{k: v for k, v in kwargs.items() if k not in _TORCH_COMPILE_OPTIONS})
    return ThunderFXCompiledObject(backend, torch.compile(fn, backend=backend, **compile_options))
