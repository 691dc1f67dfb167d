"""The text of a tensor in the user's code is eager's: its values (issue 14).

``str(t)``, ``repr(t)``, f-strings, ``"%s" % t`` and ``str.format`` need the data, so the program is split there
as for ``t.tolist()`` (docs/values-from-tensor-data.md); a 0-d tensor formats as its number. A tensor that
requires grad is refused: eager's text names its autograd node, which thunder does not reproduce.
"""

import contextlib
import io

import pytest
import torch

import thunder
from thunder.core.errors import UnsupportedError

CACHES = ("constant values", "symbolic values")

TEXTS = {
    "f_string": lambda x: f"x={x}",
    "str": lambda x: str(x * 2),
    "repr": lambda x: repr(x[:2]),
    "ascii": lambda x: ascii(x),
    "percent": lambda x: "%s and %r" % (x, x + 1),
    "percent_number": lambda x: "%.2f" % x.sum(),
    "format_method": lambda x: "{} {:.1f} {!r}".format(x, x.max(), x.min()),
    "zero_dim_spec": lambda x: f"{x.sum():.3f} {x[0]:>8}",
    "zero_dim_plain": lambda x: f"{x.sum()}",
    "in_a_list": lambda x: str([x.sum(), x[:1]]),
    "integer_tensor": lambda x: f"{x.long()}",
    "bad_spec": lambda x: f"{x:.2f}",  # eager raises TypeError for a tensor of more than 0 dims
}


def _outcome(fn, x):
    try:
        return fn(x)
    except Exception as e:
        return type(e), str(e)


@pytest.mark.parametrize("cache", CACHES)
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_text_of_a_tensor_is_eagers(name, cache):
    fn = TEXTS[name]
    jfn = thunder.jit(fn, cache=cache)
    for x in (torch.arange(3.0), torch.arange(3.0) + 0.5, torch.arange(3.0)):
        assert _outcome(jfn, x) == _outcome(fn, x)


def test_text_is_read_after_what_the_program_computed_before_it():
    def f(x):
        y = x * 2
        message = f"y is {y}"
        return y + 1, message

    jfn = thunder.jit(f)
    for x in (torch.ones(2), torch.zeros(2), torch.ones(2)):
        (actual, text), (expected, expected_text) = jfn(x), f(x)
        assert torch.equal(actual, expected) and text == expected_text
    assert thunder.cache_hits(jfn) >= 1  # the same values again: the continuation traced for them is reused


def test_an_exception_message_formatting_a_tensor():
    def f(x):
        if (x < 0).any():
            raise ValueError(f"negative entries in {x}")
        return x

    x = torch.tensor([1.0, -2.0])
    with pytest.raises(ValueError) as eager:
        f(x)
    with pytest.raises(ValueError) as jitted:
        thunder.jit(f)(x)
    assert str(jitted.value) == str(eager.value)
    assert type(jitted.value) is type(eager.value)


def test_text_of_a_tensor_that_requires_grad_is_refused():
    def f(x):
        return f"{x * 2}"

    with pytest.raises(UnsupportedError, match="requires grad.*t.detach") as info:
        thunder.jit(f)(torch.ones(2, requires_grad=True))
    assert "test_tensor_text.py" in str(info.value)  # the user's line
    assert thunder.jit(lambda x: f"{x.sum():.1f}")(torch.ones(2, requires_grad=True)) == "2.0"  # a number is fine
    assert thunder.jit(lambda x: f"{x.detach() * 2}")(torch.ones(2, requires_grad=True)) == "tensor([2., 2.])"


@pytest.mark.parametrize("cache", CACHES)
def test_print_of_sizes_and_dtypes_prints_on_every_call(cache):
    def f(x):
        print("shape", x.shape, x.shape[1:], x.dtype, x.device)
        return x * 2

    jfn = thunder.jit(f, cache=cache)
    for shape in ((2, 3), (2, 3), (4, 3)):
        x = torch.ones(shape)
        eager, jitted = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(eager):
            f(x)
        with contextlib.redirect_stdout(jitted):
            jfn(x)
        assert jitted.getvalue() == eager.getvalue()
    assert thunder.cache_hits(jfn) >= 1


def test_thunder_describes_proxies_by_name_in_its_own_messages():
    # a shape mismatch: the message thunder's meta formats names the proxies, it reads no data
    def f(x):
        return x + torch.ones(4)

    with pytest.raises(RuntimeError) as eager:
        f(torch.ones(3))
    with pytest.raises(RuntimeError) as jitted:
        thunder.jit(f)(torch.ones(3))
    assert str(jitted.value) == str(eager.value)
    assert type(jitted.value) is type(eager.value)  # pytest.raises accepts a subclass
