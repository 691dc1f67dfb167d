"""A picture of a trace: ``render_trace(trace, "trace.svg")`` (an image file), ``make_trace_dot(trace)`` (a
graphviz ``Digraph``) and ``trace_dot_source(trace)`` (its DOT text, which needs no package).

Operations are boxes labelled with their line of the trace, tensors are ellipses whose area grows with their
bytes (inputs green, outputs orange), and each fusion region is a cluster labelled with its name and executor,
holding the prims it fuses; regions and operations are coloured by the executor that runs them, and a legend
names the colours.
"""

from __future__ import annotations

import importlib.util
import math
import re
import shutil
import textwrap
import warnings
import zlib
from pathlib import Path

from thunder.core.proxies import TensorProxy
from thunder.core.pytree import tree_flatten

__all__ = ["render_trace", "make_trace_dot", "trace_dot_source"]

# an executor has the same colour in every picture (forward and backward side by side); others take one by name
_EXECUTOR_COLOURS = {"torch": "plum", "inductor": "lightblue", "triton": "lightsalmon", "nvfuser": "khaki",
                     "cudnn": "palegreen", "python": "lightgrey", "example": "wheat"}
_PALETTE = ("lightpink", "lightcyan", "burlywood", "thistle", "aquamarine", "lightsteelblue")
_SKIPPED = frozenset({"python.del"})
_TENSOR_FILLS = {"input": "green", "output": "orange", "intermediate": "white"}
_LABEL_WIDTH = 72  # characters of an operation's line before it wraps
_TENSOR_WIDTH = (0.5, 3.0)  # inches: the ellipse of the trace's smallest and largest tensor (area grows with bytes)
_TYPE_COMMENT = re.compile(r"\s+# \w+: .*$")  # `  # t0: "cpu f32[4, 16]"`: the tensor nodes show it


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
    """The operation's line of the trace without its type comment (the tensor nodes show it), wrapped when long."""
    from thunder.core.codegen import bsym_lines

    lines = [_TYPE_COMMENT.sub("", line.strip()) for line in bsym_lines(bsym, set(), with_subsymbols=False)]
    wrapped = [textwrap.fill(line, _LABEL_WIDTH, subsequent_indent="    ", break_long_words=False,
                             break_on_hyphens=False) for line in lines if line and not line.startswith("#")]
    return "\n".join(wrapped) or bsym.sym.name


def _human_bytes(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024


def _tensor_attrs(p: TensorProxy, kind: str, nbytes: int, largest: int, show_metadata: bool) -> tuple[str, dict]:
    """(label, attributes) of a tensor's ellipse: its area is proportional to its bytes, within _TENSOR_WIDTH."""
    traced = "" if all(isinstance(d, int) for d in p.shape) else " at the traced sizes"  # symbolic sizes
    description = f"{p.type_string()}, {_human_bytes(nbytes)}{traced}"
    small, large = _TENSOR_WIDTH
    width = max(small, large * math.sqrt(nbytes / largest)) if largest else small
    label = f"{p.name}\n{description}" if show_metadata else p.name
    return label, {"shape": "ellipse", "style": "filled", "fillcolor": _TENSOR_FILLS[kind],
                   "width": f"{width:.2f}", "height": f"{width / 2:.2f}", "tooltip": f"{p.name}: {description}"}


def _legend(colours: dict[str, str]) -> tuple[str, str, str, list]:
    """A cluster naming each executor's colour and each kind of tensor's."""
    nodes = [(f"legend_executor_{name}", f"executor {name}", {"shape": "box", "style": "filled", "fillcolor": fill})
             for name, fill in colours.items()]
    nodes += [(f"legend_tensor_{kind}", f"{kind} tensor", {"shape": "ellipse", "style": "filled", "fillcolor": fill})
              for kind, fill in _TENSOR_FILLS.items()]
    return "cluster_legend", "legend (tensor area grows with bytes)", "whitesmoke", nodes


def _build(trace, show_metadata: bool) -> _Graph:
    from thunder.examine.fusions import is_fusion

    g = _Graph()
    colours: dict[str, str] = {}

    def colour(executor: str) -> str:
        fallback = _PALETTE[zlib.crc32(executor.encode()) % len(_PALETTE)]
        return colours.setdefault(executor, _EXECUTOR_COLOURS.get(executor, fallback))

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
            # the region's prims are boxes joined directly: a value made inside goes from the prim making it
            members: list = []
            made_by: dict[str, str] = {}
            for j, sub in enumerate(bsym.subsymbols):
                node_id = f"op_{i}_{j}"
                members.append((node_id, _label(sub), {"shape": "box", "style": "filled", "fillcolor": "white"}))
                for p in sub.flat_proxy_args:
                    if isinstance(p, TensorProxy):
                        if p.name not in made_by:
                            tensors.setdefault(p.name, p)
                        g.edges.append((made_by.get(p.name, f"tensor_{p.name}"), node_id))
                for p in sub.flat_proxy_outs:
                    if isinstance(p, TensorProxy):
                        made_by[p.name] = node_id
            for p in bsym.flat_proxy_outs:  # what the region hands out
                if isinstance(p, TensorProxy) and p.name in made_by:
                    tensors.setdefault(p.name, p)
                    g.edges.append((made_by[p.name], f"tensor_{p.name}"))
            g.clusters.append((f"cluster_{i}", f"{bsym.sym.name} ({executor})", colour(executor), members))
        else:
            top: list = []
            op(f"op_{i}", bsym, {"shape": "box", "style": "filled", "fillcolor": colour(executor)}, top)
            g.nodes.extend(top)
    from thunder.transforms.autograd import tensor_bytes

    sizes = {name: tensor_bytes(p) for name, p in tensors.items()}
    largest = max(sizes.values(), default=0)
    for name, p in tensors.items():
        kind = "input" if name in inputs else "output" if name in outputs else "intermediate"
        label, attrs = _tensor_attrs(p, kind, sizes[name], largest, show_metadata)
        g.nodes.append((f"tensor_{name}", label, attrs))
    g.clusters.append(_legend(colours))
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


_NO_RENDERER = ("rendering a trace needs graphviz's layout engine: `pip install pygraphviz` (its wheels bundle "
                "graphviz), or the graphviz package (`pip install graphviz`) and the `dot` program (graphviz from "
                "your system's package manager); thunder.examine.trace_dot_source(trace) gives the DOT text "
                "without either")


def _draw_with_pygraphviz(source: str, path: Path, fmt: str) -> None:
    import pygraphviz

    pygraphviz.AGraph(string=source).draw(str(path), format=fmt, prog="dot")


def _draw_with_dot(source: str, path: Path, fmt: str) -> None:
    import graphviz

    path.write_bytes(graphviz.Source(source).pipe(format=fmt))


def _renderer():
    """The first way to lay out a graph that this environment has, or None."""
    if importlib.util.find_spec("pygraphviz") is not None:
        return _draw_with_pygraphviz
    if importlib.util.find_spec("graphviz") is not None and shutil.which("dot") is not None:
        return _draw_with_dot
    return None


def render_trace(trace, path, show_metadata: bool = False) -> Path:
    """Draws the trace's graph into the image file ``path``, in the format its suffix names (``.svg``, ``.png``,
    ``.pdf``, ...), and returns the path. Lays the graph out with pygraphviz when installed (no graphviz program
    needed), else with the graphviz package and the ``dot`` program; raises ImportError naming what to install
    when neither is there."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").lower()
    if not fmt:
        raise ValueError(f"render_trace: {str(path)!r} has no suffix to name the image format (e.g. 'trace.svg')")
    draw = _renderer()
    if draw is None:
        raise ImportError(_NO_RENDERER)
    draw(trace_dot_source(trace, show_metadata), path, fmt)
    return path
