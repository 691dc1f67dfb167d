"""Values read from tensor data inside regions (issue 20, "Bad input"): where the program cannot be split there, the
refusal names the read or the op, the user's line and what to do; where the region is the program's own code
(a torch.compile'd function, a nested thunder.jit), the read splits the program as at the top level; inside vmap,
eager's errors. Splits at the top level: tests/test_values_from_tensor_data.py."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.utils.checkpoint as checkpoint
from torch._higher_order_ops.while_loop import while_loop

import thunder
from thunder.core.errors import ReadInsideRegionError, UnsupportedError


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # opaque-fallback notices
        yield


def _in_cond_int(x):
    return torch.cond(x.sum() > 0, lambda x: x * int(x.argmax()), lambda x: x * 2, (x,))


def _in_cond_tolist(x):
    return torch.cond(x.sum() > 0, lambda x: x * x.tolist()[0], lambda x: x * 2, (x,))


def _in_cond_nonzero(x):
    return torch.cond(x.sum() > 0, lambda x: x.nonzero().sum() + x, lambda x: x * 2, (x,))


def _in_while_loop_body(x):
    return while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * int(x.argmax())), (torch.tensor(0), x))[1]


class _Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * int(x.argmax())

    @staticmethod
    def backward(ctx, g):
        return g


def _in_autograd_function(x):
    return _Scaled.apply(x)


@pytest.mark.parametrize("fn, what, line", [
    (_in_cond_int, r"int\(\) of a tensor", r"x \* int\(x.argmax\(\)\)"),
    (_in_cond_tolist, r"\.tolist\(\) of a tensor", r"x \* x.tolist\(\)\[0\]"),
    (_in_cond_nonzero, r"nonzero needs the size of its output", r"x.nonzero\(\).sum\(\)"),
    (_in_while_loop_body, r"int\(\) of a tensor", r"x \* int\(x.argmax\(\)\)"),
    (_in_autograd_function, r"int\(\) of a tensor", r"return x \* int\(x.argmax\(\)\)"),
], ids=["cond-int", "cond-tolist", "cond-nonzero", "while_loop-body", "autograd.Function"])
def test_a_read_inside_a_sub_program_is_refused_with_the_op_the_line_and_what_to_do(fn, what, line):
    with pytest.raises(UnsupportedError, match=f"{what}.*{line}.*sub-program.*move the read out of the region"):
        thunder.jit(fn)(torch.tensor([1.0, 3.0, 2.0]))


@pytest.mark.parametrize("body, what, line", [
    (lambda x: x * int(x.argmax()), r"int\(\) of a tensor", r"x \* int\(x.argmax\(\)\)"),
    (lambda x: x[x > 0].sum() + x, r"the output size of nonzero", r"x\[x > 0\]"),  # boolean-mask indexing
], ids=["int", "mask"])
def test_a_read_inside_a_checkpointed_region_is_refused_with_the_op_the_line_and_what_to_do(body, what, line):
    def fn(x):
        return checkpoint.checkpoint(body, x, use_reentrant=False)

    with pytest.raises(ReadInsideRegionError, match=f"{what}.*traces as one operation.*{line}.*read the value "
                                                    "before the region"):
        thunder.jit(fn)(torch.tensor([1.0, 3.0, 2.0], requires_grad=True))


def _assert_like_eager_with_gradients(fn, jfn, values):
    for v in values:
        x = torch.tensor(v, requires_grad=True)
        out, expected = jfn(x), fn(x)
        torch.testing.assert_close(out, expected)
        got, want = torch.autograd.grad(out.sum(), x), torch.autograd.grad(expected.sum(), x)
        torch.testing.assert_close(got, want)


_scaled_by_argmax = torch.compile(lambda x: x * int(x.argmax()))
_compiled_linear = torch.compile(torch.nn.Linear(3, 3))
_jitted_scaled_by_argmax = thunder.jit(lambda x: x * int(x.argmax()))


def _calls_a_compiled_function(x):
    return _scaled_by_argmax(x) + 1


def _calls_a_compiled_module(x):
    y = _compiled_linear(x)
    return y[y > 0].sum() + _scaled_by_argmax(x)


def _calls_a_jitted_function(x):
    return _jitted_scaled_by_argmax(x) + 1


@pytest.mark.parametrize("fn", [_calls_a_compiled_function, _calls_a_compiled_module, _calls_a_jitted_function],
                         ids=["torch.compile function", "torch.compile module", "nested thunder.jit"])
def test_a_read_inside_a_compiled_inner_function_splits_the_program_like_eager(fn):
    # thunder compiles the program as a whole: the function torch.compile (or an inner thunder.jit) wraps is the
    # program's own code, and a value it reads splits the program (run natively, Dynamo traced thunder's proxies)
    jfn = thunder.jit(fn)
    _assert_like_eager_with_gradients(fn, jfn, [[1.0, 5.0, 2.0], [7.0, 1.0, 2.0], [1.0, 5.0, 2.0], [0.5, 0.1, 3.0]])
    assert thunder.compile_stats(jfn).continuations >= 2  # each new argmax: a continuation, traced once


def test_a_compiled_inner_function_without_reads_runs_like_eager():
    inner = torch.compile(lambda x: x.sin() * 2)

    def fn(x):
        return inner(x) + 1

    jfn = thunder.jit(fn)
    _assert_like_eager_with_gradients(fn, jfn, [[1.0, 5.0, 2.0], [7.0, 1.0, 2.0]])
    assert thunder.cache_misses(jfn) == 1


@pytest.mark.parametrize("body", [
    lambda r: r * int(r.argmax()),
    lambda r: r * float(r.sum()),
    lambda r: r if r.sum() > 0 else -r,
    lambda r: r * r.tolist()[0],
    lambda r: r * len(range(r.argmax())),
    lambda r: r.nonzero().sum(),
    lambda r: r.unique().sum(),
    lambda r: r[r.argmax()],  # indexing with a batched 0-d tensor: no read, eager's vmap runs it
], ids=["int", "float", "bool", "tolist", "range", "nonzero", "unique", "index"])
def test_a_read_inside_vmap_raises_eagers_error(body):
    # thunder traces the vmapped function once per sample, where a read would split the program and compute
    # per sample what eager's vmap refuses
    def fn(x):
        return torch.func.vmap(body)(x)

    x = torch.tensor([[1.0, 2.0], [4.0, 3.0]])
    try:
        expected = fn(x)
    except RuntimeError as error:
        with pytest.raises(RuntimeError) as raised:
            thunder.jit(fn)(x)
        assert str(raised.value) == str(error)
    else:
        torch.testing.assert_close(thunder.jit(fn)(x), expected)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="a CUDA graph capture needs a CUDA device")
def test_a_read_at_a_split_under_a_cuda_graph_capture_is_refused_with_the_line():
    def fn(x):
        return x * int(x.argmax())

    jfn = thunder.jit(fn)
    x = torch.tensor([1.0, 3.0, 2.0], device="cuda")
    torch.testing.assert_close(jfn(x), fn(x))  # compiled outside the capture
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream), pytest.raises(UnsupportedError, match=r"int\(\) of a tensor at .*"
                                                                          r"x \* int\(x.argmax\(\)\).*CUDA graph is "
                                                                          r"captured.*keep it a tensor"):
        with torch.cuda.graph(graph, stream=stream):
            jfn(x)
