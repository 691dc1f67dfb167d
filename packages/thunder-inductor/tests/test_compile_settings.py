"""Which Inductor configuration a region is compiled with (compile.py's DEVICE_CONFIG), and the fallback to
INDUCTOR_CONFIG alone where the device's configuration fails to compile."""

import warnings

import torch
from thunder_inductor import compile as inductor_compile
from thunder_inductor.compile import InductorCompileWarning, stats

import thunder


def _record_cpp_wrapper(monkeypatch) -> list[bool]:
    """The value of Inductor's ``cpp_wrapper`` each region was compiled (or loaded) under, in order."""
    from torch._inductor import config

    seen = []
    load_or_compile = inductor_compile.InductorFusion._load_or_compile

    def recording(self, *args):
        seen.append(config.cpp_wrapper)
        return load_or_compile(self, *args)

    monkeypatch.setattr(inductor_compile.InductorFusion, "_load_or_compile", recording)
    return seen


def _fn(x):
    return torch.relu(x * 3 - 1).exp().sum(-1)


def test_a_cpu_region_with_static_sizes_compiles_with_the_cpp_wrapper(inductor_ex, monkeypatch):
    seen = _record_cpp_wrapper(monkeypatch)
    x = torch.randn(6, 11)
    jfn = thunder.jit(_fn, executors=[inductor_ex])
    torch.testing.assert_close(jfn(x), _fn(x))
    assert seen == [True]


def test_a_symbolic_region_keeps_the_python_wrapper(inductor_ex, monkeypatch):
    seen = _record_cpp_wrapper(monkeypatch)
    jfn = thunder.jit(_fn, executors=[inductor_ex], cache="symbolic values")
    for n in (5, 9):
        x = torch.randn(n, 13)
        torch.testing.assert_close(jfn(x), _fn(x))
    assert seen and not any(seen)


def test_a_configuration_that_fails_to_compile_falls_back_to_the_next(inductor_ex, monkeypatch):
    # the device's configuration names a C++ compiler that does not exist: the region compiles with INDUCTOR_CONFIG
    # alone, silently, instead of running its torch calls
    monkeypatch.setitem(inductor_compile.DEVICE_CONFIG, "cpu",
                        {"cpp_wrapper": True, "cpp.cxx": (None, "/nonexistent/g++")})
    seen = _record_cpp_wrapper(monkeypatch)
    failed, torch_calls = stats()["failed"], stats()["torch_calls"]
    x = torch.randn(7, 12)
    jfn = thunder.jit(_fn, executors=[inductor_ex])
    with warnings.catch_warnings():
        warnings.simplefilter("error", InductorCompileWarning)
        torch.testing.assert_close(jfn(x), _fn(x))
    assert seen == [True, False]
    assert stats()["failed"] == failed and stats()["torch_calls"] == torch_calls



def test_a_cpu_region_precompiles_the_wrapper_and_kernel_headers_as_one(inductor_ex, monkeypatch):
    # pch.py: the C++ wrapper's header and the kernels' header are precompiled together, and Inductor's own choice
    # of header is back after the compile
    from thunder_inductor import pch
    from torch._inductor import codecache, config

    headers = []
    precompile = codecache._precompile_header

    def recording(header, *args, **kwargs):
        headers.append(header)
        return precompile(header, *args, **kwargs)

    monkeypatch.setattr(codecache, "_precompile_header", recording)

    def fn(x):
        return torch.tanh(x * 2.7182 + 0.5).sum(0)

    x = torch.randn(5, 17)
    with config.patch(fx_graph_cache=False):  # compiled here, not found in Inductor's caches
        jfn = thunder.jit(fn, executors=[inductor_ex])
        torch.testing.assert_close(jfn(x), fn(x))
    assert headers == [pch.HEADER]
    assert codecache.CppWrapperCodeCache._get_uncompiled_header("cpu") == "torch/csrc/inductor/cpp_wrapper/cpu.h"
