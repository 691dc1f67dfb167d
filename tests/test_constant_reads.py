"""Values read from tensors computed from constants alone (frontend/constant_reads.py): read while tracing, with no
split and no check at run time; any other read still happens at run time (docs/values-from-tensor-data.md)."""

import pytest
import torch

import thunder


def _reads_at_run_time(jfn) -> bool:
    """Whether the last call's program reads a value from tensor data when it runs (a check or a split)."""
    traces = thunder.last_traces(jfn)
    return any(t.fn_name.startswith("segment") or any(b.sym.id == "read_guard" for b in t.bound_symbols)
               for t in traces)


def packed_sequences(x):
    # transformers' find_packed_sequence_indices on position ids made by arange
    p = torch.arange(0, x.shape[-1]).unsqueeze(0).expand(x.shape[0], -1)
    mask = (torch.diff(p, prepend=p[:, :1] - 1, dim=-1) != 1).cumsum(-1)
    if (mask[:, -1] == 0).all():
        return x * 2
    return x - mask


def test_a_read_of_a_tensor_made_from_constants_is_folded_into_the_trace():
    jfn = thunder.jit(packed_sequences)
    x = torch.randn(2, 8)
    torch.testing.assert_close(jfn(x), packed_sequences(x))
    assert not _reads_at_run_time(jfn)
    assert "cumsum" not in str(thunder.last_traces(jfn)[-1])  # only x * 2 runs: the mask is dead code
    torch.testing.assert_close(jfn(x + 1), packed_sequences(x + 1))


def _from_input(x):
    if (x > 0).all():
        return x * 2
    return x


def _updated_through_a_view(x):
    m = torch.ones(4)
    m[1:].mul_(x.sum())  # the constant tensor takes the input's data: its value is the call's
    if m.all():
        return x * 2
    return x


def _updated_with_constants(x):
    m = torch.ones(4)
    m.mul_(0)  # constant again, but an in-place update keeps the read at run time (never folded wrong)
    if m.any():
        return x * 2
    return x


def _random(x):
    if (torch.rand(1) > 0.5).all():
        return x * 2
    return x


def _dropout_of_a_constant(x):
    if (torch.nn.functional.dropout(torch.ones(1), 0.5) > 0).all():
        return x * 2
    return x


def _drawn_in_place(x):
    if torch.ones(1).bernoulli_(0.5).all():
        return x * 2
    return x


def _sized_by_a_symbolic_length(x):
    if (torch.arange(x.shape[0]) >= 0).all():
        return x * 2
    return x


RUN_TIME_READS = {"from an input": (_from_input, {}), "updated through a view": (_updated_through_a_view, {}),
                  "updated in place with constants": (_updated_with_constants, {}), "random": (_random, {}),
                  "dropout of a constant": (_dropout_of_a_constant, {}), "drawn in place": (_drawn_in_place, {}),
                  "symbolic length": (_sized_by_a_symbolic_length, {"cache": "symbolic values"})}


@pytest.mark.parametrize("name", RUN_TIME_READS)
def test_a_read_of_a_value_the_call_decides_stays_at_run_time(name):
    fn, options = RUN_TIME_READS[name]
    jfn = thunder.jit(fn, **options)
    for seed, x in enumerate((torch.ones(3), torch.zeros(3), -torch.ones(5), torch.ones(3), torch.ones(3))):
        torch.manual_seed(seed)  # the random cases take both branches over these seeds
        expected = fn(x)
        torch.manual_seed(seed)
        torch.testing.assert_close(jfn(x), expected)
    assert _reads_at_run_time(jfn)
