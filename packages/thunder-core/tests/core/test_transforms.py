"""The transforms on small traces: dead-code elimination, CSE, delete-last-used, dispatch."""

import torch

import thunder.torch as ltorch
from thunder.core import dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, tracectx
from thunder.extend import get_executor, resolve_executors
from thunder.transforms.cse import cse
from thunder.transforms.dce import dce
from thunder.transforms.del_last_used import del_last_used
from thunder.transforms.dispatch import dispatch_to_executors


def _trace(fn):
    trace = TraceCtx()
    with tracectx(trace):
        a = TensorProxy("a", shape=(3,), dtype=dtypes.float32, device="cpu")
        trace.args = [a]
        trace.output = fn(a)
    return trace


def _ids(trace):
    return [b.sym.id for b in trace.bound_symbols]


def test_dce_drops_unused_work():
    def fn(a):
        ltorch.exp(a)  # unused
        return ltorch.sin(a)

    assert _ids(dce(_trace(fn))) == ["ltorch.sin"]


def test_cse_reuses_equal_computations_and_renames_later_uses():
    def fn(a):
        x, y = ltorch.exp(a), ltorch.exp(a)
        z = ltorch.sin(y)
        return ltorch.add(x, z)

    t = cse(_trace(fn))
    assert _ids(t) == ["ltorch.exp", "ltorch.sin", "ltorch.add"]
    exp_out = t.bound_symbols[0].output
    assert t.bound_symbols[1].args[0] is exp_out and t.bound_symbols[2].args[0] is exp_out


def test_cse_keeps_returned_tensors_distinct():
    def fn(a):
        return ltorch.exp(a), ltorch.exp(a)  # two tensors in eager: merging them would alias the results

    assert _ids(cse(_trace(fn))) == ["ltorch.exp", "ltorch.exp"]


def test_del_last_used_frees_after_last_use():
    def fn(a):
        x = ltorch.exp(a)
        y = ltorch.sin(x)
        return ltorch.cos(y)

    t = del_last_used(_trace(fn))
    lines = [line.strip() for line in str(t).splitlines()]
    body = [line.split("  #")[0] for line in lines if line and not line.startswith("#")]
    assert body.index("del a") == body.index(next(b for b in body if "ltorch.exp" in b)) + 1
    assert "del t0" in body and "del t1" in body


def test_dispatch_uses_executor_order_and_falls_back_to_subsymbols():
    def fn(a):
        return ltorch.sigmoid(a)

    torchex = get_executor("torch")
    t = dispatch_to_executors(_trace(fn), [torchex])
    assert [b.sym.id for b in t.bound_symbols] == ["torch.torch.sigmoid"]
    # an executor that only knows prims runs the decomposition
    prims_only = type(torchex)("prims_only_for_test")
    prims_only.implmap = {k: v for k, v in torchex.implmap.items() if k.startswith("prims.")}
    t2 = dispatch_to_executors(_trace(fn), [prims_only])
    assert "torch.exp(" in str(t2) and "sigmoid" not in str(t2).split("def computation")[1]
    a = torch.randn(3)
    torch.testing.assert_close(t2.python_callable()(a), torch.sigmoid(a))


def test_resolve_executors_appends_fallbacks():
    names = [e.name for e in resolve_executors(["python"])]
    assert names == ["python", "torch"]
