"""Regions and nvFuser programs on the traces a GPU run gets, made without a GPU: fake CUDA tensors
(``thunder.testing.fake_cuda``) compiled with the nvFuser executor first, not run. What each region computes on a
device is checked by the GPU tests; here: what is fused, what stays with PyTorch, how copies become aliased outputs,
how symbolic sizes and numbers become fusion inputs, and which inputs share a definition."""

import pytest
import thunder_nvfuser
import torch
from models import Block, LlamaBlock
from thunder_nvfuser import translate
from thunder_nvfuser.fusion import NvFuserRegion

from thunder.testing.fake_cuda import compile_traces, fake_cuda, to_fake_cuda


def _regions(trace) -> list[NvFuserRegion]:
    return thunder_nvfuser.regions(trace)


def _calls(trace) -> str:
    """The trace without the regions' members (printed as comments)."""
    return "\n".join(ln for ln in str(trace).splitlines() if not ln.lstrip().startswith("#"))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_gpt_block_forward_and_backward(nvfuser_claims, dtype):
    block = Block()
    with fake_cuda():
        to_fake_cuda(block, dtype)
        x = torch.empty(2, 8, 32, device="cuda", dtype=dtype, requires_grad=True)
        forward, backward = compile_traces(block, x, executors=[nvfuser_claims])
    for trace in (forward, backward):
        regions = _regions(trace)
        assert len(regions) >= 3, trace
        calls = _calls(trace)
        # layer norms, GELU, the residual adds and their backward are in fusions; matmuls stay with PyTorch
        for composite in ("layer_norm", "gelu", "native_layer_norm_backward", "gelu_backward"):
            assert composite not in calls, (composite, trace)
        assert "torch.matmul" in calls or "torch.nn.functional.linear" in calls
        for r in regions:  # every region translates (a prim without a translation would raise)
            program = r.contiguous_program()
            assert program.startswith(f"def {r.name}(fd: FusionDefinition) -> None:")
            assert program.count("fd.define_tensor(") == len(r.tensor_inputs)
            assert program.count("fd.add_output(") == len(r.outputs)
    shown = thunder_nvfuser.fusion_definition(forward)  # before running: the programs for contiguous inputs
    assert list(shown) == [r.name for r in _regions(forward)]
    assert all(text == r.contiguous_program() for text, r in zip(shown.values(), _regions(forward)))
    forward_prims = {b.sym.name for r in _regions(forward) for b in r.prims}
    assert {"var", "rsqrt", "tanh", "add"} <= forward_prims, forward_prims
    if dtype is torch.bfloat16:  # half-precision reductions are computed in float32
        program = next(r.contiguous_program() for r in _regions(forward) if "var" in {b.sym.name for b in r.prims})
        assert "DataType.BFloat16" in program and "fd.ops.cast(" in program and "DataType.Float" in program


@pytest.mark.parametrize("opt_cls", [torch.optim.Adam, torch.optim.AdamW])
def test_optimizer_step_updates_in_place_inside_fusions(nvfuser_claims, opt_cls):
    with fake_cuda():
        params = [torch.nn.Parameter(torch.empty(s, device="cuda")) for s in [(8, 4), (16,), (3, 5)]]
        for p in params:
            p.grad = torch.empty_like(p)
        opt = opt_cls(params, lr=1e-3, weight_decay=0.01, foreach=False)
        opt.step()  # eagerly: the state exists, as in every step after the first
        # fake tensors have no memory, so the prologue's check that updated inputs do not share it cannot pass:
        # "same input" builds the same computation without prologue checks
        forward, _ = compile_traces(opt.step, executors=[nvfuser_claims], cache="same input")
    calls = _calls(forward)
    assert "copy_" not in calls, forward  # every update of a parameter or a state tensor is written by a fusion
    aliased = 0
    for r in _regions(forward):
        program = r.contiguous_program()
        copies = [b for b in r.prims if b.sym.name == "copy_to_out_"]
        destinations = {b.kwargs["out"].name for b in copies}
        assert program.count("alias_input=") == len(destinations), program  # one per updated input
        # a copied value is the destination input itself, returned as is
        inputs = [kind_i for kind_i in r.spec.results if kind_i[0] == "input"]
        assert len(inputs) == sum(1 for o in r.outputs if any(o.name == c.flat_proxy_outs[0].name for c in copies))
        aliased += len(destinations)
    # per parameter one fusion, which writes the parameter, exp_avg and exp_avg_sq (the step counter is a CPU
    # tensor, PyTorch's): each tensor is read once and written once per step
    assert len(_regions(forward)) == len(params) and aliased == 3 * len(params), forward


def test_symbolic_sizes_and_numbers_are_fusion_inputs(nvfuser_claims):
    def f(x, alpha):
        return (x.reshape(x.shape[0] * x.shape[1], -1) * alpha).exp()

    with fake_cuda():
        x = torch.empty(4, 6, 8, device="cuda")
        forward, _ = compile_traces(f, x, 0.5, executors=[nvfuser_claims], cache="symbolic values")
    (region,) = _regions(forward)
    assert region.number_inputs, forward  # the reshape's size and alpha
    program = region.contiguous_program()
    assert "fd.define_scalar(None, dtype=DataType.Int)" in program, program
    assert "fd.define_scalar(None, dtype=DataType.Double)" in program, program
    assert "fd.ops.reshape(T0, [S" in program, program
    assert "shape=[-1, -1, -1]" in program  # sizes are symbolic


@pytest.mark.parametrize("sizes, strides, descriptor", [
    ((4, 8), (8, 1), ((-1, -1), (True, True), ())),
    ((4, 8), (1, 4), ((-1, -1), (True, True), (0, 1))),  # a transpose
    ((4, 1, 8), (8, 8, 1), ((-1, 1, -1), (True, None, True), ())),  # a broadcast dim
    ((4, 8), (16, 1), ((-1, -1), (False, True), ())),  # every other row
    ((4, 8), (0, 1), ((-1, -1), (None, True), ())),  # expanded along the rows: a broadcast of extent 4
    ((2, 3, 4), (1, 8, 2), ((-1, -1, -1), (True, True, True), (0, 2, 1))),  # permuted: contiguity in memory order
    ((2, 3, 4), (1, 16, 2), ((-1, -1, -1), (False, True, True), (0, 2, 1))),  # gap after the outermost dim in memory
])
def test_descriptor(sizes, strides, descriptor):
    d = translate.describe(sizes, strides, "f32")
    assert (d.shape, d.contiguity, d.stride_order) == descriptor


def test_definitions_are_built_once_per_descriptor(nvfuser_claims, monkeypatch):
    with fake_cuda():
        forward, _ = compile_traces(lambda x, y: (x * y).sin(), torch.empty(4, 8, device="cuda"),
                                    torch.empty(4, 8, device="cuda"), executors=[nvfuser_claims])
    (region,) = _regions(forward)
    built = []
    # what is under test is the lookup, not nvFuser: a definition is any object, counted when built
    monkeypatch.setattr(NvFuserRegion, "_build", lambda self, key: built.append(key) or object())
    small, big = torch.randn(4, 8), torch.randn(40, 80)
    first = region.definition((small, small), ())
    assert region.definition((small, small), ()) is first  # the same layout
    assert region.definition((big, big), ()) is first  # a new size, the same descriptor
    transposed = region.definition((small.t().contiguous().t(), small), ())
    assert transposed is not first and len(built) == 2 == len(region.definitions)


def test_new_sizes_reuse_a_definition_new_layouts_do_not(nvfuser_claims):
    with fake_cuda():
        forward, _ = compile_traces(lambda x, y: (x * y).sin(), torch.empty(4, 8, device="cuda"),
                                    torch.empty(4, 8, device="cuda"), executors=[nvfuser_claims])
    (region,) = _regions(forward)
    small, big = torch.randn(4, 8), torch.randn(40, 80)
    assert region.key((small, small), ()) == region.key((big, big), ())
    assert region.key((small, small), ()) != region.key((small.t().contiguous().t(), small), ())
    assert region.key((small, small), ()) != region.key((small.double(), small), ())
    assert region.key((small, small), ()) != region.key((small[:1], small[:1]), ())  # a dim of 1 is a broadcast


def _saved_for_backward(trace) -> list:
    from thunder.core.proxies import TensorProxy
    from thunder.core.pytree import tree_flatten

    return [p for p in tree_flatten(trace.output[1])[0] if isinstance(p, TensorProxy)]


def test_rematerialization_saves_less_where_nvfuser_recomputes(nvfuser_claims):
    # thunder's rematerialization recomputes cheap values in the backward only where the recomputation lands in a
    # fusion: with nvFuser claiming the layer norms and GELU, the forward saves fewer tensors than with PyTorch alone
    saved = {}
    for name, executors in (("nvfuser", [nvfuser_claims]), ("torch", [])):
        block = Block()
        with fake_cuda():
            to_fake_cuda(block, torch.bfloat16)
            x = torch.empty(2, 8, 32, device="cuda", dtype=torch.bfloat16, requires_grad=True)
            forward, _ = compile_traces(block, x, executors=executors)
        saved[name] = _saved_for_backward(forward)
    numel = {k: sum(int(torch.Size(p.shape).numel()) for p in v) for k, v in saved.items()}
    assert len(saved["nvfuser"]) < len(saved["torch"]) and numel["nvfuser"] < numel["torch"], numel


def test_region_of_creation_ops(nvfuser_claims):
    def f(x):  # the matmul splits the region: arange * 2 is a fusion without tensor inputs
        return x @ (torch.arange(8, device=x.device) * 2).float()

    with fake_cuda():
        forward, _ = compile_traces(f, torch.empty(3, 8, device="cuda"), executors=[nvfuser_claims])
    (region,) = [r for r in _regions(forward) if not r.tensor_inputs]
    assert region.device == 0
    program = region.contiguous_program()
    assert "fd.ops.iota(" in program and "define_tensor" not in program, program


# The whole translation of two small regions, as nvFuser's Python text: inputs by descriptor, a cast where a half
# precision value is computed in float32, a Python number as a constant (then thunder's dtype pinned), the
# transpose as a permute, and two in-place updates of one input as one output aliased to it.
EXPECTED = {
    "cast, constant, permute, reduction": '''def nvfuser_fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    S0 = fd.define_scalar(2, dtype=DataType.Int)
    T3 = fd.ops.mul(T2, S0)
    T4 = fd.ops.cast(T3, dtype=DataType.Float)
    T5 = fd.ops.permute(T1, [1, 0])
    T6 = fd.ops.add(T4, T5)
    T7 = fd.ops.sum(T6, [1], keepdim=False)
    fd.add_output(T7)
''',
    "chained in-place updates": '''def nvfuser_fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    S0 = fd.define_scalar(2, dtype=DataType.Int)
    T2 = fd.ops.mul(T0, S0)
    T3 = fd.ops.cast(T2, dtype=DataType.Float)
    T4 = fd.ops.add(T3, T1)
    fd.add_output(T4, alias_input=T0)
''',
}


def _reduce(x, y):
    return (x.float() * 2 + y.t()).sum(-1)


def _update(x, y):
    x.mul_(2).add_(y)


@pytest.mark.parametrize("name, fn, dtype", [("cast, constant, permute, reduction", _reduce, torch.bfloat16),
                                             ("chained in-place updates", _update, torch.float32)])
def test_program_text(nvfuser_claims, name, fn, dtype):
    with fake_cuda():
        x, y = torch.empty(4, 8, device="cuda", dtype=dtype), torch.empty(4, 8, device="cuda")
        if fn is _reduce:
            y = torch.empty(8, 4, device="cuda")
        forward, _ = compile_traces(fn, x, y, executors=[nvfuser_claims], cache="same input")
    (region,) = _regions(forward)
    program = region.contiguous_program().replace(region.name, "nvfuser_fusion")
    assert program == EXPECTED[name], program


def test_llama_block_with_cudnn_attention_first(nvfuser_claims):
    # RMSNorm, rotary embeddings (slices, cat), SwiGLU and residuals in fusions; grouped-query attention forward and
    # backward on cuDNN where thunder-cudnn is installed (its decisions are the cuDNN tests'), else on PyTorch
    from thunder.extend import get_executor

    cudnn = get_executor("cudnn")
    executors = [e for e in (cudnn, nvfuser_claims) if e is not None]
    block = LlamaBlock()
    with fake_cuda():
        to_fake_cuda(block, torch.bfloat16)
        x = torch.empty(2, 16, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        forward, backward = compile_traces(block, x, executors=executors)
    for trace in (forward, backward):
        calls = _calls(trace)
        for composite in ("rms_norm", "silu", "torch.cat", "torch.rsqrt"):
            assert composite not in calls, (composite, trace)
        for r in _regions(trace):
            assert len({o.name for o in r.outputs}) == len(r.outputs)  # each value returned once
            assert r.contiguous_program().count("fd.add_output(") == len(r.outputs)
    fused = {b.sym.name for r in _regions(forward) for b in r.prims}
    assert {"rsqrt", "cat", "slice", "exp"} <= fused, fused
    if cudnn is not None:
        assert "thunder_cudnn.runtime.sdpa_forward_with_stats" in str(forward)
        assert "thunder_cudnn.runtime.sdpa_backward" in str(backward)
