"""Facts about a tensor that are not in the trace, asked inside a jitted function: ``storage_offset()``,
``dim_order()`` (layout facts, from the layout model) and ``is_inference()`` (a property of the input, or of
where the program made the tensor). Each answers as eager on every call, cached calls with other inputs
included: the prologue checks the input facts the answer came from, never a stale value."""

import pytest
import torch

import thunder


def _inputs(inference=True):
    base = torch.arange(40.0).reshape(5, 8)
    with torch.inference_mode():
        frozen = torch.arange(24.0).reshape(4, 6)
    return [base[1:, 2:], base, base.t(), base[2:], base[1:, 2:].t(), base.reshape(2, 4, 5).permute(2, 0, 1),
            base[3:, 2:]] + ([frozen, frozen[1:], frozen.t()] if inference else [])


QUERIES = {
    "storage_offset of an input": lambda x: x.storage_offset(),
    "storage_offset of a slice": lambda x: x[1:].storage_offset(),
    "storage_offset of a view chain": lambda x: x.transpose(0, -1)[..., 1:][0].storage_offset(),
    "storage_offset of a computed tensor": lambda x: (x * 2)[1:].storage_offset(),
    "dim_order of an input": lambda x: x.dim_order(),
    "dim_order of a view": lambda x: x.unsqueeze(0).transpose(0, -1).dim_order(),
    "dim_order of a computed tensor": lambda x: (x + 1).dim_order(),
    "is_inference of an input": lambda x: x.is_inference(),
    "is_inference of a view": lambda x: x[1:].is_inference(),
    "is_inference of a computed tensor": lambda x: (x * 2).is_inference(),
}
# a reduction's layout is a guess: answered where no input is an inference tensor (else refused, below)
UNKNOWN_LAYOUT = {"is_inference of a reduction": lambda x: (x.sum(0), x.sum(0)[1:])[1].is_inference()}


def _made_inside_inference_mode(x):
    with torch.inference_mode():
        y = x * 2
        inside = (y.is_inference(), x[0].is_inference(), y[0].is_inference(), x.sum(0).is_inference())
    return y + 0, (*inside, y[1:].is_inference(), (y + 1).is_inference(), y.sum(0)[1:].is_inference())


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
@pytest.mark.parametrize("name", list(QUERIES) + list(UNKNOWN_LAYOUT))
def test_tensor_facts_answer_like_eager_on_every_call(name, cache):
    query = QUERIES.get(name) or UNKNOWN_LAYOUT[name]

    def f(x):
        return x * 2, query(x), query(x) == 1  # the answer is a number the program computes with too

    jf = thunder.jit(f, cache=cache)
    for x in _inputs(inference=name in QUERIES) * 2:  # each layout again: a cached call
        got, want = jf(x), f(x)
        assert got[1:] == want[1:], (x.shape, x.stride(), x.storage_offset(), got[1:], want[1:])
        assert torch.equal(got[0], want[0])


def test_is_inference_inside_an_inference_mode_region_is_eagers():
    jf = thunder.jit(_made_inside_inference_mode)
    for x in _inputs(inference=False) * 2:
        got, want = jf(x), _made_inside_inference_mode(x)
        assert got[1] == want[1] and torch.equal(got[0], want[0])


def test_only_programs_that_ask_check_the_facts():
    jf = thunder.jit(lambda x: x[1:] * 2)
    jf(torch.ones(4, 4)[1:])
    assert "storage_offset" not in str(thunder.last_prologue_traces(jf)[-1])
    jf = thunder.jit(lambda x: x * x.storage_offset())
    jf(torch.ones(4, 4)[1:])
    prologue = str(thunder.last_prologue_traces(jf)[-1])
    assert "storage_offset() != 4" in prologue and "is_inference" not in prologue


def test_is_inference_of_a_tensor_of_unknown_layout_with_an_inference_input_is_refused_with_the_line():
    def f(x):
        return x.sum(0).is_inference()  # a reduction: its layout is a guess, and an input is an inference tensor

    with torch.inference_mode():
        x = torch.ones(3, 3)
    with pytest.raises(thunder.core.errors.UnsupportedError, match=r"Tensor.is_inference\(\).*test_tensor_facts"):
        thunder.jit(f)(x)
