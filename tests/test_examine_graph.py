"""thunder.examine's pictures of a trace: fusion regions as clusters coloured by executor with a legend, tensors
sized by bytes, readable operation labels, and ``render_trace`` writing an image file."""

import importlib.util
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest
import torch

import thunder
from helpers.tiny_fusion import tiny_fuser
from thunder.examine import render_trace, trace_dot_source
from thunder.examine.graph import _TENSOR_WIDTH


def _fused(requires_grad: bool = False):
    def f(a, b, big):
        c = (a * b).sin()
        d = c.sum()  # not elementwise: it ends the first region
        return c.cos() + d + big.sum()

    jf = thunder.jit(f, executors=[tiny_fuser()])
    a, b = torch.randn(3, 4, requires_grad=requires_grad), torch.randn(3, 4)
    big = torch.randn(48, 64)
    out = jf(a, b, big)
    torch.testing.assert_close(out, f(a, b, big))
    if requires_grad:
        out.sum().backward()
    return jf


def _node_attrs(source: str, node: str) -> str:
    m = re.search(rf'^\s*"{re.escape(node)}" \[(.*)\];$', source, re.MULTILINE)
    assert m, f"no node {node} in\n{source}"
    return m.group(1)


def _width(source: str, node: str) -> float:
    return float(re.search(r'width="([\d.]+)"', _node_attrs(source, node)).group(1))


def test_regions_are_clusters_named_and_coloured_by_executor_with_a_legend():
    trace = thunder.last_traces(_fused())[-1]
    source = trace_dot_source(trace)
    regions = [b.sym.name for b in trace.bound_symbols if b.subsymbols and b.sym.executor.name == "tiny_fuser"]
    assert len(regions) == 2
    for name in regions:
        assert f'label="{name} (tiny_fuser)"; style=filled; color="' in source
    assert "subgraph cluster_legend" in source
    legend = source[source.index("subgraph cluster_legend"):]
    fills = dict(re.findall(r'"legend_executor_(\w+)" \[label="executor \w+", [^]]*fillcolor="(\w+)"', legend))
    assert set(fills) == {"tiny_fuser", "torch"}, fills
    # a region's cluster and the operations outside regions carry the colour the legend gives their executor
    assert f'label="{regions[0]} (tiny_fuser)"; style=filled; color="{fills["tiny_fuser"]}"' in source
    outside = dict(re.findall(r'"op_\d+" \[label="([^"]*)", shape="box", style="filled", fillcolor="(\w+)"', source))
    assert [fill for label, fill in outside.items() if "torch.sum(" in label] == [fills["torch"]] * 2, outside
    # each prim of a region is a box inside its cluster, joined directly to the prims using its value
    first = source[source.index(f'label="{regions[0]} (tiny_fuser)"'):]
    first = first[:first.index("}")]
    assert "prims.mul(a, b)" in first and "prims.sin(" in first


def test_each_executor_has_one_colour_in_forward_and_backward():
    jf = _fused(requires_grad=True)
    colours = []
    for trace in (thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1]):
        legend = trace_dot_source(trace).split("subgraph cluster_legend")[1]
        colours.append(dict(re.findall(r'"legend_executor_(\w+)" \[[^]]*fillcolor="(\w+)"', legend)))
    assert colours[0]["torch"] == colours[1]["torch"]
    assert colours[0]["tiny_fuser"] == colours[1]["tiny_fuser"]
    assert colours[0]["torch"] != colours[0]["tiny_fuser"]


def test_tensor_area_grows_with_bytes():
    trace = thunder.last_traces(_fused())[-1]
    source = trace_dot_source(trace)
    big, a = _width(source, "tensor_big"), _width(source, "tensor_a")  # 48*64 and 3*4 float32
    assert big == _TENSOR_WIDTH[1]  # the trace's largest tensor
    assert a == pytest.approx(max(_TENSOR_WIDTH[0], big * (12 / 3072) ** 0.5), abs=0.01)
    assert big > a
    # bytes are in the tooltip always and in the label with show_metadata
    assert 'tooltip="big: cpu f32[48, 64], 12.0 KiB"' in _node_attrs(source, "tensor_big")
    assert 'label="big\\lcpu f32[48, 64], 12.0 KiB\\l"' in trace_dot_source(trace, show_metadata=True)


def test_symbolic_sizes_are_sized_by_the_traced_bytes():
    def f(x, w):
        return torch.nn.functional.linear(x, w).relu().sum(0)

    jf = thunder.jit(f, cache="symbolic values")
    jf(torch.randn(5, 8, requires_grad=True), torch.randn(3, 8)).sum().backward()
    for trace in (thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1]):
        source = trace_dot_source(trace, show_metadata=True)
        assert re.search(r"f32\[s\d+, s\d+\], 60 bytes at the traced sizes", source), source  # 5 x 3 float32


def test_operation_labels_drop_the_type_comment_and_wrap_long_lines():
    def f(x):
        return torch.nn.functional.pad(x, (1, 1, 2, 2, 3, 3), mode="constant", value=0.123456789) * 2

    jf = thunder.jit(f)
    jf(torch.randn(2, 3, 4))
    source = trace_dot_source(thunder.last_traces(jf)[-1])
    labels = re.findall(r'"op_\d+" \[label="([^"]*)"', source)
    assert labels and not any("# t" in label for label in labels), labels
    pad = next(label for label in labels if "pad" in label)
    assert all(len(line) <= 72 for line in pad.split("\\l")), pad


def _has_renderer() -> bool:
    import shutil

    return importlib.util.find_spec("pygraphviz") is not None or (
        importlib.util.find_spec("graphviz") is not None and shutil.which("dot") is not None)


@pytest.mark.skipif(not _has_renderer(), reason="needs pygraphviz, or the graphviz package and the dot program")
def test_render_trace_writes_an_svg_with_the_clusters_and_labels(tmp_path):
    trace = thunder.last_traces(_fused())[-1]
    path = render_trace(trace, tmp_path / "trace.svg", show_metadata=True)
    root = ElementTree.fromstring(path.read_text())
    ns = {"svg": "http://www.w3.org/2000/svg"}
    texts = [t.text or "" for t in root.iterfind(".//svg:text", ns)]
    groups = {g.get("class") for g in root.iterfind(".//svg:g", ns)}
    assert {"cluster", "node", "edge"} <= groups
    regions = [b.sym.name for b in trace.bound_symbols if b.subsymbols and b.sym.executor.name == "tiny_fuser"]
    for name in regions:
        assert f"{name} (tiny_fuser)" in texts, texts
    assert any("prims.mul(a, b)" in t for t in texts) and "cpu f32[48, 64], 12.0 KiB" in texts
    assert "executor tiny_fuser" in texts and "input tensor" in texts
    png = render_trace(trace, tmp_path / "trace.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_render_trace_names_what_to_install_without_a_renderer(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pygraphviz", None)  # as if neither package were installed
    monkeypatch.setitem(sys.modules, "graphviz", None)
    trace = thunder.last_traces(_fused())[-1]
    with pytest.raises(ImportError, match=r"pip install pygraphviz.*`dot` program"):
        render_trace(trace, tmp_path / "trace.svg")
    assert not (tmp_path / "trace.svg").exists()
    with pytest.raises(ValueError, match="no suffix"):
        render_trace(trace, tmp_path / "trace")


def test_import_thunder_loads_no_graph_code():
    code = ("import sys, thunder; loaded = [m for m in ('thunder.examine.graph', 'pygraphviz', 'graphviz') "
            "if m in sys.modules]; assert not loaded, loaded")
    subprocess.run([sys.executable, "-c", code], check=True)
