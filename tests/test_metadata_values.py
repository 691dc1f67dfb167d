"""User code sees a tensor's metadata as eager shows it: ``torch.Size``, ``torch.dtype``, ``torch.device``.

Text built from them (str, repr, f-strings, messages the program formats), values stored outside the
function and values returned must equal eager's, type included, under every cache option.
"""

import pytest
import torch

import thunder

CACHES = ("constant values", "symbolic values")
LOG = []


def _same(a, b):
    return type(a) is type(b) and a == b


def texts(x):
    return (str(x.shape), f"{x.shape}", repr(x.size()), f"{x.size()!r:>30}", str(x.shape[-1:]), repr(x.shape[:0]),
            str(x.dtype), f"{x.dtype}", repr(x.dtype), str(x.device), repr(x.device), "{} {}".format(x.shape, x.dtype),
            "%s" % (x.dtype,), str(x.shape[1:] + (4,)), str((4,) + x.shape[1:]))


def values(x):
    return (x.shape, x.size(), x.shape[1:], x.dtype, x.device, isinstance(x.shape, torch.Size),
            isinstance(x.size(), tuple), x.size(1), x.size(dim=-1), x.shape.numel(), len(x.shape))


def stores(x):
    LOG.append(x.shape)
    LOG.append((x.dtype, x.device))
    return x + 1


def message(x):
    if x.shape[0] > 100:
        return x
    raise ValueError(f"expected a batch of more than 100, got shape {x.shape} of {x.dtype}")


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("fn", [texts, values])
def test_metadata_as_eager_shows_it(fn, cache):
    jfn = thunder.jit(fn, cache=cache)
    for shape in ((2, 3), (4, 5), (4, 5)):
        x = torch.ones(*shape)
        got, expected = jfn(x), fn(x)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert _same(g, e), (g, e)


@pytest.mark.parametrize("cache", CACHES)
def test_metadata_stored_outside_keeps_its_type(cache):
    jfn = thunder.jit(stores, cache=cache)
    for shape in ((2, 3), (4, 5), (4, 5)):
        x = torch.ones(*shape)
        LOG.clear()
        stores(x)
        expected = list(LOG)
        LOG.clear()
        jfn(x)
        assert [type(v) for v in LOG] == [type(v) for v in expected]
        assert LOG == expected
        assert type(LOG[1][0]) is torch.dtype and type(LOG[1][1]) is torch.device


@pytest.mark.parametrize("cache", CACHES)
def test_metadata_in_exception_messages(cache):
    jfn = thunder.jit(message, cache=cache)
    for shape in ((2, 3), (4, 5)):
        x = torch.ones(*shape)
        with pytest.raises(ValueError) as eager:
            message(x)
        with pytest.raises(ValueError) as jitted:
            jfn(x)
        assert str(jitted.value) == str(eager.value)


def test_symbolic_sizes_stay_symbolic_until_printed():
    # reading the shape for arithmetic keeps one program for every size; printing it needs the values
    def arithmetic(x):
        return x.reshape(x.shape[0] * x.shape[1])

    jfn = thunder.jit(arithmetic, cache="symbolic values")
    for shape in ((2, 3), (4, 5), (6, 7)):
        torch.testing.assert_close(jfn(torch.ones(*shape)), arithmetic(torch.ones(*shape)))
    assert thunder.cache_misses(jfn) == 1
    trace = str(thunder.last_traces(jfn)[-1])
    assert "torch.Size" not in trace


QUERIES = {
    "layout": lambda x: (x.layout, x.layout == torch.strided),
    "numel": lambda x: torch.numel(x) + x.numel(),
    "result_type": lambda x: (torch.result_type(x, 1), torch.result_type(x, 2.5), torch.result_type(x, x.double()),
                              torch.result_type(x.int(), 1.5), torch.result_type(x[0, 0].double(), x)),
    "masked_sum": lambda x: torch.masked._ops.sum(x, 1, mask=x > 0),  # torch.masked asks the layout
}


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_layout_numel_and_result_type_as_eager(name, cache):
    fn = QUERIES[name]
    x = torch.randn(3, 4)
    expected, actual = fn(x), thunder.jit(fn, cache=cache)(x)
    if isinstance(expected, torch.Tensor):
        assert torch.equal(actual, expected)
    else:
        assert type(actual) is type(expected) and actual == expected
        if isinstance(expected, tuple):  # True == 1 and a dtype against its name: each element eager's type
            assert [type(a) for a in actual] == [type(e) for e in expected], actual


NOT_DENSE = {
    "sparse_coo": lambda: torch.eye(3).to_sparse(),
    "sparse_csr": lambda: torch.eye(3).to_sparse_csr(),
    "quantized": lambda: torch.quantize_per_tensor(torch.randn(3), 0.1, 0, torch.qint8),
    "nested": lambda: torch.nested.nested_tensor([torch.randn(2), torch.randn(3)]),
}


@pytest.mark.parametrize("name", sorted(NOT_DENSE))
def test_tensors_other_than_dense_are_refused_by_name(name):
    # a trace computes as for dense tensors (x.is_sparse was False for a sparse input): refuse, never answer densely
    def f(x):
        return x.is_sparse, x * 2

    with pytest.raises(thunder.core.errors.UnsupportedError, match="dense strided tensors, and the input x is"):
        thunder.jit(f)(NOT_DENSE[name]())


def test_a_refusal_inside_library_code_names_the_users_line_too():
    class WithSparseBuffer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("table", torch.eye(3).to_sparse())

        def forward(self, x):
            return x + self.table.to_dense()  # the user's line

    with pytest.raises(thunder.core.errors.UnsupportedError) as refused:
        thunder.jit(WithSparseBuffer())(torch.ones(3, 3))
    # torch's Module.__getattr__ reads the buffer; the message names that line and the one in this file
    assert f"called from {__file__}:" in str(refused.value)
    assert "return x + self.table.to_dense()  # the user's line" in str(refused.value)
