"""Code written for lightning-thunder 0.2.x runs here unchanged: each test uses an API the way
lightning-thunder's documentation shows it and compares the results with eager PyTorch.

What differs, and why, is in docs/coming-from-lightning-thunder.md.
"""

import importlib.util
import warnings

import pytest
import torch
import torch.nn as nn

import thunder


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3))


# ---------------------------------------------------------------------------------------------
# thunder.jit options
# ---------------------------------------------------------------------------------------------


def test_debug_options_register_option_and_check_traces():
    from thunder import DebugOptions

    DebugOptions.register_option("compat_test_option", bool, False, "an option registered by a test")
    try:
        assert "an option registered by a test" in DebugOptions.__doc__
        assert DebugOptions().compat_test_option is False
        assert DebugOptions(compat_test_option=True).compat_test_option is True
        with pytest.raises(TypeError, match="compat_test_option"):
            DebugOptions(compat_test_option=5)
        with pytest.raises(AttributeError, match="already registered"):
            DebugOptions.register_option("compat_test_option", bool, False)
    finally:
        for table in (DebugOptions._defaults, DebugOptions._types, DebugOptions._docs):
            del table["compat_test_option"]
        del DebugOptions.compat_test_option
    with pytest.raises(TypeError, match="no_such_option"):
        DebugOptions(no_such_option=True)

    model = _model()
    x = torch.randn(5, 4, requires_grad=True)
    jm = thunder.jit(model, debug_options=thunder.DebugOptions(check_traces=True))
    torch.testing.assert_close(jm(x), model(x))
    expected = torch.autograd.grad(model(x).sum(), x)
    torch.testing.assert_close(torch.autograd.grad(jm(x).sum(), x), expected)


def test_check_traces_finds_what_a_broken_transform_did():
    def drop_first_symbol(trace):  # a broken transform: later symbols read what it removed
        from thunder.core.trace import from_trace

        broken = from_trace(trace)
        broken.bound_symbols = list(trace.bound_symbols[1:])
        return broken

    jf = thunder.jit(lambda a: (a.sin() * 2).cos(), transforms=[drop_first_symbol],
                     debug_options=thunder.DebugOptions(check_traces=True))
    with pytest.raises(AssertionError, match="used before it is defined"):
        jf(torch.randn(3))


def test_unknown_jit_option_is_an_error_naming_it():
    with pytest.raises(TypeError, match="use_cudagraphs_typo"):
        thunder.jit(lambda a: a, use_cudagraphs_typo=True)


def test_disable_torch_autograd_runs_as_inference():
    model = _model()
    x = torch.randn(5, 4, requires_grad=True)
    jm = thunder.jit(model, disable_torch_autograd=True)
    out = jm(x)
    assert not out.requires_grad and out.grad_fn is None
    with torch.no_grad():
        torch.testing.assert_close(out, model(x))
    assert thunder.last_backward_traces(jm) == []


def test_cache_mode_is_an_alias_of_cache():
    def f(a, n):
        return a * n

    jf = thunder.jit(f, cache_mode="no caching")
    a = torch.randn(3)
    torch.testing.assert_close(jf(a, 2), f(a, 2))
    torch.testing.assert_close(jf(a, 2), f(a, 2))
    assert thunder.cache_misses(jf) == 2 and thunder.cache_hits(jf) == 0
    with pytest.raises(ValueError, match="alias"):
        thunder.jit(f, cache="same input", cache_mode="no caching")


def test_accepted_options_without_effect():
    def f(a):
        b = a.view(-1)
        b.add_(1)  # an in-place update seen through an alias
        return a * 2

    for options in ({"disable_preprocessing": True}, {"skip_inplace_alias_updates": True}, {"langctx": "torch"}):
        a, ref = torch.randn(2, 3), None
        ref_a = a.clone()
        ref = f(ref_a)
        torch.testing.assert_close(thunder.jit(f, **options)(a), ref)
        torch.testing.assert_close(a, ref_a)
    with pytest.raises(ValueError, match="langctx"):
        thunder.jit(f, langctx="numpy")


# ---------------------------------------------------------------------------------------------
# thunder.compile, recipes and compile plugins
# ---------------------------------------------------------------------------------------------


def test_compile_default_recipe_matches_eager():
    model = _model()
    x = torch.randn(5, 4, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "nvFuser is not available" on machines without it
        cm = thunder.compile(model)
        cm_default = thunder.compile(model, recipe="default")
    for compiled in (cm, cm_default):
        assert isinstance(compiled, thunder.ThunderModule)
        torch.testing.assert_close(compiled(x), model(x))
        torch.testing.assert_close(torch.autograd.grad(compiled(x).sum(), x), torch.autograd.grad(model(x).sum(), x))


def test_compile_unknown_recipe_and_plugin_are_errors():
    with pytest.raises(ValueError, match="no-such-recipe"):
        thunder.compile(_model(), recipe="no-such-recipe")
    with pytest.raises(ValueError, match="no-such-plugin"):
        thunder.compile(_model(), plugins="no-such-plugin")


def test_hf_transformers_recipe():
    transformers = pytest.importorskip("transformers")
    from thunder.recipes import HFTransformers

    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config).eval()
    ids = torch.randint(0, 64, (1, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "nvFuser is not available" on machines without it
        cm = thunder.compile(model, recipe="hf-transformers")
    with torch.no_grad():
        torch.testing.assert_close(cm(ids).logits, model(ids).logits)
    assert isinstance(HFTransformers(), thunder.Recipe)
    with pytest.raises(ValueError, match="PreTrainedModel"):
        thunder.compile(_model(), recipe="hf-transformers")


def test_register_plugin_transforms_and_lookasides():
    calls = []

    class Recorder(thunder.Transform):
        def transform_trace_post_optimization(self, computation_trace, **kwargs):
            calls.append(computation_trace.fn_name)
            return computation_trace

    def scaled(a):
        return a * 10

    class MyPlugin(thunder.Plugin):
        def setup_transforms(self):
            return [Recorder()]

        def setup_lookasides(self):
            from thunder.recipes import Lookaside

            return [Lookaside(scaled, lambda a: a * 3)]  # during tracing, scaled() is replaced

    thunder.register_plugin("compat-test-plugin", MyPlugin)
    try:
        from thunder.plugins import get_plugin_names

        assert "compat-test-plugin" in get_plugin_names()

        def f(a):
            return scaled(a) + 1

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cf = thunder.compile(f, plugins="compat-test-plugin")
        a = torch.randn(3)
        torch.testing.assert_close(cf(a), a * 3 + 1)
        assert calls == ["computation"]
    finally:
        from thunder.recipes.plugins import names_to_plugins

        del names_to_plugins["compat-test-plugin"]


@pytest.mark.parametrize("name, reason", [
    ("fp8", "TransformerEngine"),
    ("quantize-int4", "bitsandbytes"),
    ("reduce-overhead", "CUDA"),
])
def test_plugins_whose_runtime_is_missing_are_refused_with_the_reason(name, reason):
    from thunder.core.errors import UnsupportedError

    with pytest.raises(UnsupportedError, match=reason), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thunder.compile(_model(), plugins=name)


@pytest.mark.parametrize("name", ["ddp", "fsdp"])
def test_distributed_plugins_prepare_the_model_with_thunder_distributed(name):
    import torch.distributed as dist

    from thunder.plugins import DDP, FSDP

    assert {"ddp": DDP, "fsdp": FSDP}[name] is thunder.plugins.get_plugin(name)
    if importlib.util.find_spec("thunder.distributed") is None:
        pytest.skip("this installation has no thunder.distributed (the refusal is tested below)")
    if not dist.is_available():
        pytest.skip("torch.distributed is not available in this PyTorch build")
    created = not dist.is_initialized()
    if created:  # one process is a whole world: DDP and FSDP2 run their real code paths on it
        dist.init_process_group("gloo", rank=0, world_size=1, store=dist.HashStore())
    try:
        model, reference = _model(), _model()
        cm = thunder.compile(model, plugins=name)
        x = torch.randn(5, 4)
        out, expected = cm(x), reference(x)
        torch.testing.assert_close(out, expected)
        # the plugin prepared the model with DDP / FSDP2, and the jit runs the engine around the compiled forward
        from thunder.distributed.boundaries import DDPBoundary, FSDPBoundary

        assert isinstance(cm._run, {"ddp": DDPBoundary, "fsdp": FSDPBoundary}[name]), type(cm._run)
        assert thunder.compile_stats(cm._run.functions[0]).calls == 1
        out.sum().backward()
        expected.sum().backward()
        grads = [p.grad.full_tensor() if hasattr(p.grad, "full_tensor") else p.grad for p in model.parameters()]
        torch.testing.assert_close(grads, [p.grad for p in reference.parameters()])
    finally:
        if created:
            dist.destroy_process_group()


@pytest.mark.parametrize("name", ["ddp", "fsdp"])
def test_distributed_plugins_without_thunder_distributed_are_refused(name, monkeypatch):
    import sys

    from thunder.core.errors import UnsupportedError

    monkeypatch.setitem(sys.modules, "thunder.distributed", None)  # as if this installation had none
    with pytest.raises(UnsupportedError, match=f"thunder.distributed.{name}"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thunder.compile(_model(), plugins=name)


# ---------------------------------------------------------------------------------------------
# Transforms
# ---------------------------------------------------------------------------------------------


def test_constant_folding():
    from thunder.transforms import ConstantFolding

    def forward(x):
        scale_t = torch.tensor([2.0])
        scale_t = (scale_t * 10) / 5
        return x * scale_t

    jf = thunder.jit(forward, transforms=[ConstantFolding()])
    x = torch.randn(3)
    torch.testing.assert_close(jf(x), forward(x))
    final = thunder.last_traces(jf)[-1]
    ops = [b.sym.name for b in final.bound_symbols if b.sym.name != "del"]
    assert ops == ["tensor", "mul"], final  # the folded constant, then the one multiplication by it
    assert "4.0" in str(final)


def test_prune_prologue_checks():
    from thunder.transforms import PrunePrologueChecks

    model = _model()
    x = torch.randn(5, 4)
    for prune_all in (False, True):
        jm = thunder.jit(model, transforms=[PrunePrologueChecks(prune_all_checks=prune_all)])
        torch.testing.assert_close(jm(x), model(x))
        checked = [b.args[0].name for b in thunder.last_prologue_traces(jm)[0].bound_symbols
                   if b.sym.name == "check_tensor"]
        # the parameters' checks go; the input's stays unless every check is pruned
        assert checked == ([] if prune_all else ["input"])
        torch.testing.assert_close(jm(x), model(x))
        assert thunder.cache_hits(jm) == 1


def test_materialization_transform():
    from thunder.transforms import MaterializationTransform

    with torch.device("meta"):
        model = _model()
    reference = _model()
    jm = thunder.jit(model, transforms=[MaterializationTransform(
        "cpu", init=MaterializationTransform.init_from_original_state_dict(reference.state_dict()))])
    assert all(p.device.type == "cpu" for p in model.parameters())
    x = torch.randn(5, 4)
    torch.testing.assert_close(jm(x), reference(x))

    with torch.device("meta"):
        fresh = _model()
    jm = thunder.jit(fresh, transforms=[MaterializationTransform(
        "cpu", init=MaterializationTransform.init_from_original_module_init())])
    torch.testing.assert_close(jm(x), fresh(x))
    assert all(p.device.type == "cpu" and p.abs().sum() > 0 for p in fresh.parameters())


def test_transforms_not_provided_say_why():
    with pytest.raises(ImportError, match="peft"):
        from thunder.transforms import LORATransform  # noqa: F401


# ---------------------------------------------------------------------------------------------
# ThunderFX
# ---------------------------------------------------------------------------------------------


def test_thunderfx_whole_graph():
    from thunder.dynamo import thunderfx

    model = _model()
    x = torch.randn(5, 4, requires_grad=True)
    torch._dynamo.reset()
    cm = thunderfx(model)
    torch.testing.assert_close(cm(x), model(x))
    torch.testing.assert_close(torch.autograd.grad(cm(x).sum(), x), torch.autograd.grad(model(x).sum(), x))
    assert len(cm.last_traces) == 1 and len(cm.last_backward_traces) == 1
    assert all(info.split_reasons == [] for info in cm._backend.subgraph_infos)


def test_thunder_compiler_takes_whole_graphs_with_creations_lists_and_autocast():
    from thunder.dynamo import ThunderCompiler

    def f(x, w):
        positions = torch.arange(x.shape[-1], dtype=torch.float32)  # a creation from no tensor
        y = torch.cat([x, x * positions], dim=-1)  # a list argument
        with torch.autocast("cpu", dtype=torch.bfloat16):
            z = y @ w
        return z.float().softmax(-1)

    x, w = torch.randn(3, 4), torch.randn(8, 5)
    backend = ThunderCompiler()
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(f, backend=backend)(x, w), f(x, w))
    assert [info.split_reasons for info in backend.subgraph_infos] == [[]]


def test_thunder_compiler_split_reasons():
    from thunder.dynamo import SplitReasonType, ThunderCompiler

    @torch.library.custom_op("lightning_thunder_compat::scale_", mutates_args={"x"})
    def scale_(x: torch.Tensor, s: float) -> None:
        x.mul_(s)

    @scale_.register_fake
    def _(x, s):
        return None

    def f(x, y):
        a = x.sin() * y
        b = a.clone()
        scale_(b, 2.0)  # thunder has no out-of-place form of this custom in-place op
        return a.cos() + b

    x, y = torch.randn(4), torch.randn(4)
    backend = ThunderCompiler()
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(f, backend=backend)(x, y), f(x, y))
    (info,) = backend.subgraph_infos
    (reason,) = info.split_reasons
    assert reason.reason_type is SplitReasonType.MISSING_OP_SUPPORT
    assert "scale_" in reason.info and "in place" in reason.exception
    assert len(info.thunder_compiled_fns) == 2  # before and after the op Inductor runs


def test_thunder_profile_and_optimize():
    from thunder.dynamo import thunder_optimize, thunder_profile

    def foo(x):
        return (x.exp() + 1).sum()

    x = torch.randn(2, 2)
    pfoo = thunder_profile(foo)
    pfoo(x)
    pfoo(x)
    (stats,) = pfoo._tao.id_to_profile_stats.values()
    assert sum(stats.input_meta_to_called_times.values()) == 2
    optfoo = thunder_optimize(pfoo)
    torch.testing.assert_close(optfoo(x), foo(x))
    with pytest.raises(AssertionError, match="profiling"):
        pfoo(x)


# ---------------------------------------------------------------------------------------------
# thunder.trace and thunder.examine
# ---------------------------------------------------------------------------------------------


def test_thunder_trace():
    from thunder.extend import resolve_executors
    from thunder.transforms.dispatch import dispatch_to_executors

    def f(a, b):
        return (a * b).sin() + 2

    a, b = torch.randn(3), torch.randn(3)
    trace = thunder.trace()(f, a, b)
    assert isinstance(trace, thunder.TraceCtx)
    assert [s.sym.name for s in trace.bound_symbols] == ["mul", "sin", "add"]
    runnable = dispatch_to_executors(trace, resolve_executors(None)).python_callable()
    torch.testing.assert_close(runnable(a, b), f(a, b))


def test_examine_reports_and_compares_with_eager(capsys):
    from thunder.examine import examine

    model = _model()
    x = torch.randn(5, 4)
    report = examine(model, x)
    out = capsys.readouterr().out
    assert "distinct operations" in out and "working as expected" in out
    assert report.works and report.matches_eager

    def uses_fliplr(a):  # no torch-language symbol: runs as one opaque call, and is reported before compiling
        return torch.fliplr(a) * 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = examine(uses_fliplr, torch.randn(2, 3), show_call_stack=1)
    assert any("fliplr" in name for name in report.without_symbol) and report.matches_eager
    out = capsys.readouterr().out
    assert "fliplr" in out and "torch.fliplr(a) * 2" in out  # the call site, one frame deep

    def updates_its_input(a):
        a.mul_(2)
        return a + 1

    a = torch.ones(3)
    assert examine(updates_its_input, a).matches_eager  # both runs start from the same values
    torch.testing.assert_close(a, torch.full((3,), 2.0))  # updated once, by the compiled run, as a call would

    def unsupported(a):
        return torch.nonzero(a > 0) if _data_dependent_shapes_refused() else a.clone().resize_(2, 2)

    report = examine(unsupported, torch.randn(4))
    assert report.compile_error is not None and "not supported" in report.compile_error
    assert examine(lambda a: a.no_such_method(), torch.randn(2)).eager_error is not None


def _data_dependent_shapes_refused() -> bool:
    try:
        thunder.jit(lambda a: torch.nonzero(a))(torch.ones(2))
    except NotImplementedError:
        return True
    return False


def _fused_trace():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from helpers.tiny_fusion import tiny_fuser

    def f(a, b):
        c = (a * b).sin()
        d = c.sum()  # not elementwise: it ends the first region
        return c.cos() + d

    jf = thunder.jit(f, executors=[tiny_fuser()])
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    torch.testing.assert_close(jf(a, b), f(a, b))
    return thunder.last_traces(jf)[-1], (a, b)


def test_get_fusions_and_fusion_symbols():
    from thunder.examine import get_fusion_symbols, get_fusions

    trace, (a, b) = _fused_trace()
    symbols = get_fusion_symbols(trace, warn_if_fusions_unavailable=False)
    assert [[s.sym.name for s in b.subsymbols] for b in symbols] == [["mul", "sin"], ["cos"]]
    fusions = get_fusions(trace, warn_if_fusions_unavailable=False)
    assert [name for name, _ in fusions] == [b.sym.name for b in symbols]
    (t1,) = fusions[0][1](a, b)  # a fusion's callable computes what its prims compute
    torch.testing.assert_close(t1, (a * b).sin())


def test_make_trace_dot():
    from thunder.examine.graph import make_trace_dot, trace_dot_source

    trace, _ = _fused_trace()
    source = trace_dot_source(trace, show_metadata=True)
    assert source.count("subgraph cluster_") == 3 and "(tiny_fuser)" in source  # two regions and the legend
    assert "prims.mul(a, b)" in source and 'fillcolor="green"' in source and "cpu f32[3, 4]" in source
    if importlib.util.find_spec("graphviz") is None:
        with pytest.warns(UserWarning, match="graphviz"):
            assert make_trace_dot(trace) is None
        pytest.skip("the graphviz package is not installed: only the DOT source was checked")
    dot = make_trace_dot(trace)
    first_fusion = next(b for b in trace.bound_symbols if b.subsymbols).sym.name
    assert dot.source.count("subgraph cluster_") == 3 and f"{first_fusion} (tiny_fuser)" in dot.source


# ---------------------------------------------------------------------------------------------
# Names: dtypes, devices, internals
# ---------------------------------------------------------------------------------------------


def test_dtype_and_device_names():
    assert thunder.float32 is thunder.dtypes.float32 and thunder.bfloat16 is thunder.dtypes.bfloat16
    for name in ("bool8", "uint8", "int8", "int16", "int32", "int64", "bfloat16", "float16", "float32", "float64",
                 "complex32", "complex64", "complex128"):
        dtype = getattr(thunder, name)
        torch_dtype = thunder.torch.to_torch_dtype(dtype)
        assert isinstance(torch_dtype, torch.dtype)
        assert thunder.torch.to_thunder_dtype(torch_dtype) is dtype
    assert thunder.torch.to_torch_dtype(None) is None and thunder.torch.to_thunder_dtype(None) is None
    assert thunder.devices.to_device("cpu") == thunder.devices.cpu == torch.device("cpu")
    assert thunder.devices.Device("cuda:1").index == 1
    assert thunder.devices.to_torch_device("cpu") == torch.device("cpu")

    def f(a):
        return a.to(thunder.torch.to_torch_dtype(thunder.float64)) * 2

    a = torch.randn(3)
    torch.testing.assert_close(thunder.jit(f)(a), f(a))


def test_internals_users_import():
    from thunder.core.interpreter import interpret
    from thunder.core.prims import PrimIDs
    from thunder.core.proxies import TensorProxy
    from thunder.core.symbol import BoundSymbol
    from thunder.core.trace import TraceCtx, from_trace

    jf = thunder.jit(lambda a, b: a + b)
    jf(torch.randn(2), torch.randn(2))
    trace = thunder.last_traces(jf)[0]
    assert isinstance(trace, TraceCtx) and isinstance(from_trace(trace), TraceCtx)
    assert all(isinstance(p, TensorProxy) for p in trace.args)
    assert all(isinstance(b, BoundSymbol) for b in trace.bound_symbols)
    (add,) = trace.bound_symbols
    assert [s.sym.id for s in add.subsymbols] == [PrimIDs.ADD]

    def program(x, n):
        total = 0
        for i in range(n):
            total = total + x * i
        try:
            [][0]
        except IndexError as e:
            caught = type(e).__name__
        return total, caught

    x = torch.randn(3)
    result, caught = interpret(program)(x, 4)
    torch.testing.assert_close(result, program(x, 4)[0])
    assert caught == "IndexError"
    with pytest.raises(ZeroDivisionError):
        interpret(lambda: 1 / 0)()


def test_top_level_executor_and_inspection_names():
    from thunder.transforms import PrunePrologueChecks

    assert thunder.pytorch_executor is thunder.get_executor("torch")
    assert thunder.resolve_executors(["torch"])[0] is thunder.pytorch_executor
    if thunder.get_executor("nvfuser") is None:
        assert thunder.nvfuser_executor is None
    transforms = [PrunePrologueChecks()]
    jf = thunder.jit(lambda a: a * 2, cache="no caching", transforms=transforms)
    a = torch.randn(3)
    torch.testing.assert_close(jf(a), a * 2)
    assert thunder.cache_option(jf) is thunder.CACHE_OPTIONS.NO_CACHING
    assert thunder.list_transforms(jf) == transforms
    assert issubclass(thunder.TensorProxy, thunder.Proxy) and issubclass(thunder.IntegerProxy, thunder.NumberProxy)


def test_transform_hooks_on_programs_that_read_tensor_data():
    from thunder.core.errors import UnsupportedError
    from thunder.transforms import ConstantFolding

    def f(x):
        if x.sum() > 0:  # a value read from tensor data: the program runs as segments
            return x * 2
        return x - 1

    calls = []

    class Recorder(thunder.Transform):
        def transform_trace_post_optimization(self, computation_trace, **kwargs):
            calls.append(computation_trace.fn_name)
            return computation_trace

    x = torch.ones(3)
    torch.testing.assert_close(thunder.jit(f, transforms=[Recorder()])(x), f(x))
    assert calls  # applied to the segments
    with pytest.raises(UnsupportedError, match="segments"):
        thunder.jit(f, transforms=[ConstantFolding()])(x)
