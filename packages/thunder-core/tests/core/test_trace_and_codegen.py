"""Traces, bound symbols and their printing as Python."""

import pytest
import torch

import thunder.torch as ltorch
from thunder.core import dtypes, prims
from thunder.core.codegen import prettyprint
from thunder.core.proxies import IntegerProxy, TensorProxy
from thunder.core.symbol import SourceLocation
from thunder.core.trace import TraceCtx, tracectx


def _trace_of(fn, *protos):
    trace = TraceCtx()
    with tracectx(trace):
        args = [TensorProxy(shape=s, dtype=d, device="cpu") for s, d in protos]
        trace.args = args
        trace.output = fn(*args)
    return trace


def test_bound_symbols_record_subsymbols_down_to_prims():
    trace = _trace_of(lambda a, b: ltorch.add(a, b), ((2, 3), dtypes.float32), ((3,), dtypes.float32))
    (bsym,) = trace.bound_symbols
    assert bsym.sym.id == "ltorch.add" and not bsym.sym.is_prim
    assert [s.sym.id for s in bsym.subsymbols] == ["prims.broadcast_in_dim", "prims.add"]
    assert all(s.sym.is_prim for s in bsym.subsymbols)


def test_printed_trace_has_metadata_and_compiles():
    trace = _trace_of(lambda a: ltorch.sin(a), ((4,), dtypes.float32))
    src = str(trace)
    assert '# t0: "cpu f32[4]"' in src and "import thunder.torch as ltorch" in src
    assert "    # t1 = prims.sin(t0)" in src  # subsymbols as comments, one level deeper
    compile(src, "<trace>", "exec")


def test_source_location_comment_printed_once_per_line():
    trace = TraceCtx()
    loc = SourceLocation("user.py", 7, "f", "y = x.exp() * 2")
    trace.location_fn = lambda: loc
    with tracectx(trace):
        a = TensorProxy(shape=(2,), dtype=dtypes.float32, device="cpu")
        trace.args = [a]
        trace.output = ltorch.mul(ltorch.exp(a), 2)
    src = str(trace)
    assert src.count("# user.py:7: \ty = x.exp() * 2") == 1


def test_prettyprint_values():
    assert prettyprint(float("inf")) == "float('inf')"
    assert prettyprint((1,)) == "(1,)"
    assert prettyprint(slice(None, 3, None)) == "slice(None, 3, None)"
    assert prettyprint(torch.float16) == "torch.float16"
    assert prettyprint(dtypes.bfloat16) == "dtypes.bfloat16"


def test_shapes_may_hold_integer_proxies():
    with tracectx(TraceCtx()):
        n = IntegerProxy(value=5)
        t = TensorProxy(shape=(2, n), dtype=dtypes.float32, device="cpu")
        assert t.type_string() == f"cpu f32[2, {n.name}]"
        assert t.size(1) is n


def test_calling_a_symbol_outside_a_trace_is_a_clear_error():
    with pytest.raises(RuntimeError, match="only be called while tracing"):
        prims.sin(1.0)


def test_prim_metas_validate():
    with tracectx(TraceCtx()):
        a = TensorProxy(shape=(2, 3), dtype=dtypes.float32, device="cpu")
        b = TensorProxy(shape=(3, 2), dtype=dtypes.float32, device="cpu")
        with pytest.raises(RuntimeError, match="shapes differ"):
            prims.add(a, b)
        with pytest.raises(RuntimeError, match="invalid for input of size 6"):
            prims.reshape(a, (4, 2))
        assert prims.matmul(a, b).shape == (2, 2)
        assert prims.add(2, 3) == 5  # numbers without proxies compute
