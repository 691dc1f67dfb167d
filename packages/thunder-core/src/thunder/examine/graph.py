"""A picture of a trace: ``make_trace_dot(trace)`` (a graphviz ``Digraph``) and ``trace_dot_source(trace)``
(its DOT text, which needs no graphviz package).

Operations are boxes labelled with their line of the trace, tensors are ellipses (inputs green, outputs
orange), and each fusion region is a cluster labelled with its name and executor, holding the prims it
fuses; regions and operations are coloured by the executor that runs them.
"""

from __future__ import annotations

import importlib.util
import warnings

from thunder.core.proxies import TensorProxy
from thunder.core.pytree import tree_flatten

__all__ = ["make_trace_dot", "trace_dot_source"]

_PALETTE = ("lightblue", "plum", "khaki", "lightsalmon", "palegreen", "lightpink", "lightcyan", "wheat")
_SKIPPED = frozenset({"python.del"})


class _Graph:
    """The graph as plain data: nodes, edges and clusters, emitted as DOT text or into a graphviz Digraph."""

    def __init__(self):
        self.nodes: list[tuple[str, str, dict]] = []  # (id, label, attributes)
        self.edges: list[tuple[str, str]] = []
        self.clusters: list[tuple[str, str, str, list]] = []  # (name, label, colour, nodes)


def _executor_name(bsym) -> str:
    ex = bsym.sym.executor
    return ex.name if ex is not None else "none"


def _label(bsym) -> str:
    from thunder.core.codegen import bsym_lines

    lines = bsym_lines(bsym, set(), with_subsymbols=False)
    return "\n".join(line.strip() for line in lines if not line.strip().startswith("#")) or bsym.sym.name


def _tensor_label(p: TensorProxy, show_metadata: bool) -> str:
    if not show_metadata:
        return p.name
    return f"{p.name}\n{p.type_string()}"


def _build(trace, show_metadata: bool) -> _Graph:
    from thunder.examine.fusions import is_fusion

    g = _Graph()
    colours: dict[str, str] = {}

    def colour(executor: str) -> str:
        return colours.setdefault(executor, _PALETTE[len(colours) % len(_PALETTE)])

    inputs = {p.name for p in trace.args if isinstance(p, TensorProxy)}
    outputs = {p.name for p in tree_flatten(trace.output)[0] if isinstance(p, TensorProxy)}
    tensors: dict[str, TensorProxy] = {}

    def op(node_id: str, bsym, attrs: dict, into: list) -> None:
        into.append((node_id, _label(bsym), attrs))
        for p in bsym.flat_proxy_args:
            if isinstance(p, TensorProxy):
                tensors.setdefault(p.name, p)
                g.edges.append((f"tensor_{p.name}", node_id))
        for p in bsym.flat_proxy_outs:
            if isinstance(p, TensorProxy):
                tensors.setdefault(p.name, p)
                g.edges.append((node_id, f"tensor_{p.name}"))

    for i, bsym in enumerate(trace.bound_symbols):
        if bsym.sym.id in _SKIPPED:
            continue
        executor = _executor_name(bsym)
        if is_fusion(bsym):
            members: list = []
            inside = {o.name for sub in bsym.subsymbols for o in sub.flat_proxy_outs}
            for j, sub in enumerate(bsym.subsymbols):
                node_id = f"op_{i}_{j}"
                members.append((node_id, _label(sub), {"shape": "box", "style": "filled", "fillcolor": "white"}))
                for p in sub.flat_proxy_args:
                    if isinstance(p, TensorProxy):
                        source = f"tensor_{p.name}" if p.name not in inside else f"inner_{i}_{p.name}"
                        if p.name not in inside:
                            tensors.setdefault(p.name, p)
                        g.edges.append((source, node_id))
                for p in sub.flat_proxy_outs:
                    if isinstance(p, TensorProxy):
                        g.edges.append((node_id, f"inner_{i}_{p.name}"))
                        members.append((f"inner_{i}_{p.name}", p.name, {"shape": "point"}))
            for p in bsym.flat_proxy_outs:  # what the region hands out
                if isinstance(p, TensorProxy):
                    tensors.setdefault(p.name, p)
                    g.edges.append((f"inner_{i}_{p.name}", f"tensor_{p.name}"))
            g.clusters.append((f"cluster_{i}", f"{bsym.sym.name} ({executor})", colour(executor), members))
        else:
            top: list = []
            op(f"op_{i}", bsym, {"shape": "box", "style": "filled", "fillcolor": colour(executor)}, top)
            g.nodes.extend(top)
    for name, p in tensors.items():
        fill = "green" if name in inputs else "orange" if name in outputs else "white"
        g.nodes.append((f"tensor_{name}", _tensor_label(p, show_metadata),
                        {"shape": "ellipse", "style": "filled", "fillcolor": fill}))
    return g


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\l") + ('\\l"' if "\n" in s else '"')


def _attrs(attrs: dict) -> str:
    return ", ".join(f"{k}={_quote(str(v))}" for k, v in attrs.items())


def trace_dot_source(trace, show_metadata: bool = False) -> str:
    """The DOT source of the trace's graph (render it with ``dot -Tsvg``)."""
    g = _build(trace, show_metadata)
    lines = ["digraph trace {", '  node [fontname="monospace", fontsize="10"];']
    for name, label, fill, members in g.clusters:
        lines.append(f"  subgraph {name} {{")
        lines.append(f"    label={_quote(label)}; style=filled; color={_quote(fill)};")
        lines += [f"    {_quote(n)} [label={_quote(lbl)}, {_attrs(a)}];" for n, lbl, a in members]
        lines.append("  }")
    lines += [f"  {_quote(n)} [label={_quote(lbl)}, {_attrs(a)}];" for n, lbl, a in g.nodes]
    lines += [f"  {_quote(a)} -> {_quote(b)};" for a, b in g.edges]
    lines.append("}")
    return "\n".join(lines)


def make_trace_dot(trace, show_metadata: bool = False):
    """The trace's graph as a ``graphviz.Digraph`` (``.render()``, or display it in a notebook); None, with a
    warning, when the graphviz package is not installed (``trace_dot_source`` needs no package)."""
    if importlib.util.find_spec("graphviz") is None:
        warnings.warn("the graphviz package is not installed (pip install graphviz); thunder.examine.graph."
                      "trace_dot_source(trace) gives the DOT text without it", stacklevel=2)
        return None
    import graphviz

    g = _build(trace, show_metadata)
    dot = graphviz.Digraph(node_attr={"fontname": "monospace", "fontsize": "10"})
    for name, label, fill, members in g.clusters:
        with dot.subgraph(name=name) as cluster:
            cluster.attr(label=label, style="filled", color=fill)
            for n, lbl, a in members:
                cluster.node(n, lbl, **a)
    for n, lbl, a in g.nodes:
        dot.node(n, lbl, **a)
    for a, b in g.edges:
        dot.edge(a, b)
    return dot
