"""Compiled regions saved under Inductor's cache directory: a second jit (as a second process would) loads them
instead of recording and compiling the region again, and computes what eager does."""

import os

import pytest
import torch
from thunder_inductor.compile import stats

import thunder


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    return tmp_path / "thunder_inductor"


def _fn(x, w):
    return torch.tanh(x @ w).softmax(-1) * 2


def _counts():
    s = stats()
    return s["compiles"], s["loads"]


def test_a_second_jit_loads_the_region_and_a_new_layout_compiles(inductor_ex, fresh_cache):
    x, w = torch.randn(5, 7), torch.randn(7, 3)
    c0, l0 = _counts()
    torch.testing.assert_close(thunder.jit(_fn, executors=[inductor_ex])(x, w), _fn(x, w))
    assert _counts() == (c0 + 1, l0) and len(os.listdir(fresh_cache)) == 2  # the artifact and its FX code

    jfn = thunder.jit(_fn, executors=[inductor_ex])
    torch.testing.assert_close(jfn(x, w), _fn(x, w))
    assert _counts() == (c0 + 1, l0 + 1)
    from thunder_inductor import fx_graphs

    assert "aten.mm" in next(iter(fx_graphs(jfn).values()))
    xt = torch.randn(7, 5).t()  # other strides: another key, compiled, never the saved graph
    torch.testing.assert_close(thunder.jit(_fn, executors=[inductor_ex])(xt, w), _fn(xt, w))
    assert _counts() == (c0 + 2, l0 + 1)


def test_a_damaged_entry_compiles_again(inductor_ex, fresh_cache):
    x, w = torch.randn(4, 7), torch.randn(7, 3)
    thunder.jit(_fn, executors=[inductor_ex])(x, w)
    for name in os.listdir(fresh_cache):
        if not name.endswith(".py"):
            (fresh_cache / name).write_bytes(b"not an artifact")
    c0, l0 = _counts()
    torch.testing.assert_close(thunder.jit(_fn, executors=[inductor_ex])(x, w), _fn(x, w))
    assert _counts() == (c0 + 1, l0)


def test_symbolic_sizes_load_once_for_every_size_of_the_pattern(inductor_ex, fresh_cache):
    def fn(x, y):
        return torch.exp(x) * y + 1

    thunder.jit(fn, executors=[inductor_ex], cache="symbolic values")(torch.randn(5, 6), torch.randn(5, 6))
    jfn = thunder.jit(fn, executors=[inductor_ex], cache="symbolic values")
    c0, l0 = _counts()
    for n in (3, 9, 17):
        x, y = torch.randn(n, 6), torch.randn(n, 6)
        torch.testing.assert_close(jfn(x, y), fn(x, y))
    assert _counts() == (c0, l0 + 1)


def test_switched_off_with_inductors_fx_graph_cache(inductor_ex, fresh_cache):
    from torch._inductor import config

    x, w = torch.randn(3, 7), torch.randn(7, 3)
    with config.patch(fx_graph_cache=False):  # (monkeypatch would hide the option once undone)
        torch.testing.assert_close(thunder.jit(_fn, executors=[inductor_ex])(x, w), _fn(x, w))
    assert not fresh_cache.exists()


def _decode_like(cache, x, end):
    return (cache[:, :end] * x).sum(1).tanh()


def test_a_saved_graph_whose_guards_reject_the_call_is_not_run(inductor_ex, fresh_cache):
    # The disk key names sizes and strides up to renaming: a cache that is a view of a longer one (HF's
    # DynamicCache.crop after a rejected draft token) has the key of the contiguous cache a graph was saved for, and
    # strides that graph's guards reject (Inductor's stride assertion failed, and the call ran eagerly with a
    # CompiledProgramFailedWarning). Its own graph is compiled instead.
    import warnings

    jfn = thunder.jit(_decode_like, executors=[inductor_ex], cache="symbolic values")
    cache, x = torch.randn(3, 40, 5), torch.randn(3, 1, 5)
    view = torch.randn(3, 41, 5)[:, :40]  # strides (205, 5, 1): the key of (200, 5, 1), other relations
    with warnings.catch_warnings():
        warnings.simplefilter("error", thunder.frontend.jit.CompiledProgramFailedWarning)
        for end in (7, 8):
            torch.testing.assert_close(jfn(cache, x, end), _decode_like(cache, x, end))
        c0, l0 = _counts()
        torch.testing.assert_close(jfn(view, x, 9), _decode_like(view, x, 9))
    assert _counts() == (c0 + 1, l0)
