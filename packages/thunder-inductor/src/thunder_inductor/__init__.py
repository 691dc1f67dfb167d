"""thunder-inductor: a fusion executor for thunder that compiles each fusion region with TorchInductor.

Installed, it registers the ``inductor`` executor through thunder's plugin hooks. It is not a default executor,
by measurement (docs/inductor.md): on the issue-15 GPT on CPU its steady state is as fast as torch.compile's and
2-10% faster than thunder's default executors, but a first call on a cold Inductor cache compiles C++ for 5-30 s
where the default executors take 0.2-0.4 s. Select it with ``thunder.jit(fn, executors=["inductor"])``.
Compiled regions are saved under Inductor's cache directory, so a later process starts in well under a second.
``fx_graphs(jfn)`` shows the FX graphs it compiled.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["inductor_executor", "fx_graphs"]


def inductor_executor():
    """The ``inductor`` executor object (also ``thunder.extend.get_executor("inductor")``)."""
    from thunder_inductor.plugin import ex

    return ex


def fx_graphs(jfn) -> dict[str, str]:
    """Fusion name -> the code of each FX graph compiled for it, for the fusions in the last computation (and
    backward) traces of ``jfn`` that have run."""
    import thunder

    found: dict[str, str] = {}
    for getter in (thunder.last_traces, thunder.last_backward_traces):
        traces = getter(jfn)
        if not traces:
            continue
        for bsym in traces[-1].bound_symbols:
            for fusion in (bsym.sym.call_ctx or {}).values():
                graphs = getattr(fusion, "graph_codes", None)
                if bsym.sym.id.startswith("inductor.") and graphs is not None:
                    for k, code in enumerate(graphs()):
                        found.setdefault(fusion.name if k == 0 else f"{fusion.name}[{k}]", code)
    return found
