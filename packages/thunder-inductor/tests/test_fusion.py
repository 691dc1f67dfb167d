import pytest
import torch
import torch.nn.functional as F
from thunder_inductor import fx_graphs
from thunder_inductor.compile import stats

import thunder


def _fusions(trace):
    return [b for b in trace.bound_symbols if b.sym.id.startswith("inductor.")]


def _compiled_or_loaded():
    return stats()["compiles"] + stats()["loads"]


def _norm_gelu_softmax(x, w, b):
    y = F.layer_norm(x, (x.shape[-1],), w, b)
    return F.gelu(y) * 2 + x.softmax(-1)


def test_forward_and_backward_match_eager_and_are_fused(inductor_ex):
    x = torch.randn(4, 8, 16, requires_grad=True)
    w = torch.randn(16, requires_grad=True)
    b = torch.randn(16, requires_grad=True)
    jfn = thunder.jit(_norm_gelu_softmax, executors=[inductor_ex])
    out, ref = jfn(x, w, b), _norm_gelu_softmax(x, w, b)
    torch.testing.assert_close(out, ref)
    g = torch.randn_like(ref)
    torch.testing.assert_close(torch.autograd.grad(out, (x, w, b), g), torch.autograd.grad(ref, (x, w, b), g))
    fwd, bwd = thunder.last_traces(jfn)[-1], thunder.last_backward_traces(jfn)[-1]
    assert len(_fusions(fwd)) == 1 and len(_fusions(bwd)) == 1
    source = str(fwd)
    assert "inductor_fusion_" in source and "# t" in source and "prims.erf" in source  # members as comments
    graphs = fx_graphs(jfn)
    assert len(graphs) == 2 and all("torch.ops.aten" in code for code in graphs.values())


def test_matmul_joins_the_region_and_indexing_splits_it(inductor_ex):
    # a matmul is an extern kernel inside Inductor's graph (one compile for the whole chain); an index lookup stays
    # with the torch executor, so that an index out of range raises eager's error
    def fn(x, w, idx):
        y = torch.tanh(x @ w).sum(-1) * 3
        return torch.nn.functional.embedding(idx, w.t()).exp() + y[:2, None]

    x, w, idx = torch.randn(5, 7), torch.randn(7, 3), torch.tensor([0, 2])
    jfn = thunder.jit(fn, executors=[inductor_ex])
    torch.testing.assert_close(jfn(x, w, idx), fn(x, w, idx))
    trace = thunder.last_traces(jfn)[-1]
    assert len(_fusions(trace)) == 2 and not any("matmul" in b.sym.id for b in trace.bound_symbols)
    assert any("embedding" in b.sym.id for b in trace.bound_symbols)
    assert any("aten.mm" in code for code in fx_graphs(jfn).values())
    with pytest.raises(IndexError) as eager:
        fn(x, w, torch.tensor([0, 7]))
    with pytest.raises(IndexError) as got:
        jfn(x, w, torch.tensor([0, 7]))
    assert str(got.value) == str(eager.value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.bool])
def test_dtypes(inductor_ex, dtype):
    def fn(a, b):
        return (a + b) * b, a > b

    a, b = (torch.arange(12).reshape(3, 4) % 5).to(dtype), (torch.arange(12).reshape(3, 4) % 3).to(dtype)
    if dtype is torch.bool:
        def fn(a, b):  # noqa: F811
            return a & b, a | ~b
    jfn = thunder.jit(fn, executors=[inductor_ex])
    torch.testing.assert_close(jfn(a, b), fn(a, b))


def test_symbolic_sizes_compile_one_graph_for_many_sizes(inductor_ex):
    def fn(x, y):
        return torch.exp(x) * y + 1

    jfn = thunder.jit(fn, executors=[inductor_ex], cache="symbolic values")
    before = _compiled_or_loaded()
    for n in (5, 9, 17):
        x, y = torch.randn(n, 6), torch.randn(n, 6)
        torch.testing.assert_close(jfn(x, y), fn(x, y))
    assert _compiled_or_loaded() - before == 1
    # a size of 1 is another graph (Inductor specializes 0 and 1), and still right
    x, y = torch.randn(1, 6), torch.randn(1, 6)
    torch.testing.assert_close(jfn(x, y), fn(x, y))


def test_a_new_input_layout_compiles_again_and_stays_right(inductor_ex):
    def fn(x):
        return x.sin() + 1

    jfn = thunder.jit(fn, executors=[inductor_ex], cache="symbolic values")
    x = torch.randn(6, 4)
    torch.testing.assert_close(jfn(x), fn(x))
    xt = torch.randn(4, 6).t()  # same sizes, transposed strides
    torch.testing.assert_close(jfn(xt), fn(xt))


def test_gpt_block_forward_and_backward(inductor_ex):
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self, d=32, heads=4):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
            q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    model = Block()
    jmodel = thunder.jit(model, executors=[inductor_ex])
    x = torch.randn(2, 8, 32)
    out, ref = jmodel(x), model(x)
    torch.testing.assert_close(out, ref)
    params = list(model.parameters())
    torch.testing.assert_close(torch.autograd.grad(out.square().sum(), params),
                               torch.autograd.grad(ref.square().sum(), params))
    # the whole block is one graph each way, attention included as the flash kernel and its backward
    assert len(_fusions(thunder.last_traces(jmodel)[-1])) == len(_fusions(thunder.last_backward_traces(jmodel)[-1])) == 1
    codes = list(fx_graphs(jmodel).values())
    assert "_scaled_dot_product_flash_attention_for_cpu.default" in codes[0]
    assert "_scaled_dot_product_flash_attention_for_cpu_backward" in codes[1]
    with torch.no_grad():  # inference: attention claimed whole, the same kernel
        torch.testing.assert_close(jmodel(x), model(x))
    assert len(_fusions(thunder.last_traces(jmodel)[-1])) == 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: Inductor's Triton kernels need a GPU")
def test_cuda_regions_match_eager(inductor_ex):
    x = torch.randn(4, 8, 16, device="cuda", requires_grad=True)
    w = torch.randn(16, device="cuda", requires_grad=True)
    b = torch.randn(16, device="cuda", requires_grad=True)
    jfn = thunder.jit(_norm_gelu_softmax, executors=[inductor_ex])
    out, ref = jfn(x, w, b), _norm_gelu_softmax(x, w, b)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close(torch.autograd.grad(out.sum(), (x, w, b)), torch.autograd.grad(ref.sum(), (x, w, b)))
    assert _fusions(thunder.last_traces(jfn)[-1])


def test_positions_read_by_an_embedding_are_no_region_of_their_own(inductor_ex):
    # an iota (or a full) alone is not worth a compile and a call: torch makes it
    def fn(idx, w):
        return F.embedding(torch.arange(idx.shape[-1]), w) * 2 + 1

    idx, w = torch.tensor([[1, 2, 0]]), torch.randn(4, 5)
    jfn = thunder.jit(fn, executors=[inductor_ex])
    torch.testing.assert_close(jfn(idx, w), fn(idx, w))
    trace = thunder.last_traces(jfn)[-1]
    assert len(_fusions(trace)) == 1 and any(b.sym.id.endswith("arange") or "iota" in b.sym.id
                                             for b in trace.bound_symbols)


@pytest.mark.parametrize("shape", [(2, 2, 8, 16), (2, 8, 16)], ids=["4d-flash-kernel", "3d-not-the-kernel"])
def test_attention_claimed_only_where_torch_runs_its_kernel(inductor_ex, shape):
    # 4-d: claimed whole, forward and backward are the flash kernels inside Inductor's graphs; 3-d: the torch
    # executor's kernel does not take it, so neither does inductor, and the built-in rule's decomposition is fused
    q, k, v = (torch.randn(shape, requires_grad=True) for _ in range(3))

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).exp()

    jfn = thunder.jit(fn, executors=[inductor_ex])
    out, ref = jfn(q, k, v), fn(q, k, v)
    torch.testing.assert_close(out, ref)
    g = torch.randn_like(ref)
    torch.testing.assert_close(torch.autograd.grad(out, (q, k, v), g), torch.autograd.grad(ref, (q, k, v), g))
    codes = "\n".join(fx_graphs(jfn).values())
    assert ("_scaled_dot_product_flash_attention_for_cpu_backward" in codes) == (len(shape) == 4)
    (sdpa,) = [b for b in thunder.last_traces(jfn)[0].bound_symbols if b.sym.id == "ltorch.scaled_dot_product_attention"]
    why = inductor_ex.why_not(sdpa)
    assert why is None if len(shape) == 4 else "only where the torch executor runs it as its kernel" in why


def _decode_like(cache, x, end):
    # a decode step's shape: the region slices a cache to the positions filled so far, an integer that grows
    return (cache[:, :end] * x).sum(1).tanh()


def test_an_integer_seen_with_a_second_value_becomes_an_input_of_the_graph(inductor_ex):
    # a decode loop: compiled for the first value, then once more with the integer symbolic, not once per value
    jfn = thunder.jit(_decode_like, executors=[inductor_ex], cache="symbolic values")
    cache, x = torch.randn(3, 40, 5), torch.randn(3, 1, 5)
    before = _compiled_or_loaded()
    for end in range(7, 15):
        torch.testing.assert_close(jfn(cache, x, end), _decode_like(cache, x, end))
    assert _compiled_or_loaded() - before == 2
    assert thunder.cache_misses(jfn) == 1


def test_a_region_runs_the_graph_whose_guards_accept_the_call(inductor_ex, monkeypatch):
    # Recording the slice with a symbolic end assumed end <= the cache's length (past it the graph would read past
    # the cache) and the cache's strides: thunder's prologue checks its own assumptions, not the region's graph's,
    # so the region checks its graphs' guards, compiles another graph for a call none accepts and, past
    # MAX_GRAPHS, runs its torch calls.
    from thunder_inductor import compile as region_compile

    jfn = thunder.jit(_decode_like, executors=[inductor_ex], cache="symbolic values")
    cache, x = torch.randn(3, 40, 5), torch.randn(3, 1, 5)
    for end in (7, 8):
        jfn(cache, x, end)
    (fusion,) = _fusions(thunder.last_traces(jfn)[-1])
    region = fusion.sym.call_ctx[fusion.sym.name]
    assert [a.name for a in fusion.args] == ["cache", "x", "s0", "end", "s2"] and region.dynamic == (1,)
    ((_, guards),) = region.compiled[region.key((cache, x), (3, 9, 5))]  # the graph with `end` symbolic
    assert guards(cache, x, 9) and not guards(cache, x, 50)
    before = _compiled_or_loaded()
    torch.testing.assert_close(region(cache, x, 3, 9, 5), (_decode_like(cache, x, 9),))
    assert _compiled_or_loaded() == before
    transposed = torch.randn(3, 5, 40).transpose(1, 2)  # the same sizes, other strides: no graph accepts it
    monkeypatch.setattr(region_compile, "MAX_GRAPHS", 1)
    torch_calls = stats()["torch_calls"]
    torch.testing.assert_close(region(transposed, x, 3, 9, 5), (_decode_like(transposed, x, 9),))
    assert stats()["torch_calls"] == torch_calls + 1 and _compiled_or_loaded() == before
    monkeypatch.setattr(region_compile, "MAX_GRAPHS", 8)
    torch.testing.assert_close(region(transposed, x, 3, 9, 5), (_decode_like(transposed, x, 9),))
    assert stats()["torch_calls"] == torch_calls + 1 and _compiled_or_loaded() == before + 1


def test_a_region_called_with_one_layout_checks_that_layout_first_and_never_accepts_more(inductor_ex):
    # litgpt's decode step: the same cache tensors every step, only the position changes. After a call the graph's
    # guards accepted, a check specialized to that call's layout (every size and stride, the storage offsets, the
    # guards that read the integers) is tried first; whatever it accepts the graph's own check accepts too.
    from thunder_inductor.compile import MAX_LAYOUT_CHANGES

    jfn = thunder.jit(_decode_like, executors=[inductor_ex], cache="symbolic values")
    cache, x = torch.randn(3, 40, 5), torch.randn(3, 1, 5)
    for end in (7, 8, 9, 10):
        torch.testing.assert_close(jfn(cache, x, end), _decode_like(cache, x, end))
    (fusion,) = _fusions(thunder.last_traces(jfn)[-1])
    region = fusion.sym.call_ctx[fusion.sym.name]
    check, _, exact = region.last
    assert exact is not None and region.dynamic == (1,)
    big = torch.randn(4, 40, 5)
    calls = {
        "the same layout": (cache, x, 3, 11, 5),
        "another position": (cache, x, 3, 25, 5),
        "the whole cache (the graph assumed a shorter slice)": (cache, x, 3, 40, 5),
        "past the cache (the guard reading the integer)": (cache, x, 3, 41, 5),
        "a longer cache": (torch.randn(3, 41, 5), x, 3, 9, 5),
        "other strides": (torch.randn(3, 5, 40).transpose(1, 2), x, 3, 9, 5),
        "a storage offset": (big[1:], x, 3, 9, 5),
        "another dtype": (cache.double(), x.double(), 3, 9, 5),
        "another baked number": (cache, x, 3, 9, 6),
    }
    accepted = {why for why, args in calls.items() if exact(*args) is not None}
    assert accepted == {"the same layout", "another position"}
    assert {why for why, args in calls.items() if check(*args) is not None} >= accepted
    for why, args in calls.items():
        # thunder's program calls the region with numbers that agree with its tensors (the slice's end within the
        # cache, the last size its width)
        if why not in ("another baked number", "past the cache (the guard reading the integer)"):
            torch.testing.assert_close(region(*args), (_decode_like(args[0], args[1], args[3]),), msg=why)
    # a cache that grows every call: after MAX_LAYOUT_CHANGES rejections the region stops specializing
    for length in range(41, 41 + MAX_LAYOUT_CHANGES + 3):
        longer = torch.randn(3, length, 5)
        torch.testing.assert_close(region(longer, x, 3, 9, 5), (_decode_like(longer, x, 9),))
    assert region.last[2] is None


@pytest.mark.parametrize("cache_option", ["symbolic values", "constant values"])
def test_the_graph_a_region_ran_last_is_tried_first_only_where_its_guards_accept(inductor_ex, cache_option):
    # A decode step calls each region with inputs the graph it ran last accepts: that graph's check (TensorGuards,
    # the baked numbers, the rest of its guards) runs first and the full lookup (the input key, every graph's guards)
    # is skipped. Every call its guards would reject takes the full lookup and is right.
    jfn = thunder.jit(_decode_like, executors=[inductor_ex], cache=cache_option)
    cache, x = torch.randn(3, 40, 5), torch.randn(3, 1, 5)
    for end in (7, 8, 9):
        jfn(cache, x, end)
    (fusion,) = _fusions(thunder.last_traces(jfn)[-1])
    region = fusion.sym.call_ctx[fusion.sym.name]
    lookups = []
    real_lookup = region._lookup
    region._lookup = lambda *a: lookups.append(a) or real_lookup(*a)
    numbers = (3, 9, 5) if cache_option == "symbolic values" else ()
    assert region.last is not None
    torch.testing.assert_close(region(cache, x, *numbers), (_decode_like(cache, x, 9),))
    assert lookups == []
    big = torch.randn(4, 40, 5)
    rejected = {
        "other strides": (torch.randn(3, 5, 40).transpose(1, 2), x),
        "a storage offset": (big[1:], x),
        "another dtype": (cache.double(), x.double()),
    }
    if cache_option == "constant values":  # the graph assumed the sizes; with symbolic sizes it takes this one
        rejected["another size"] = (torch.randn(3, 41, 5), x)
    else:
        longer = torch.randn(3, 41, 5)
        torch.testing.assert_close(region(longer, x, *numbers), (_decode_like(longer, x, 9),))
        assert lookups == []
    for why, (c, xx) in rejected.items():
        before = len(lookups)
        torch.testing.assert_close(region(c, xx, *numbers), (_decode_like(c, xx, 9),), msg=why)
        assert len(lookups) > before, why  # (twice where no graph accepts it yet)
        torch.testing.assert_close(region(cache, x, *numbers), (_decode_like(cache, x, 9),), msg=why)
    if cache_option == "symbolic values":  # a baked number with another value: the full lookup
        before = len(lookups)
        torch.testing.assert_close(region(cache, x.expand(3, 1, 5).contiguous(), 3, 9, 5),
                                   (_decode_like(cache, x, 9),))
        wide = torch.randn(3, 40, 6), torch.randn(3, 1, 6)
        torch.testing.assert_close(region(*wide, 3, 9, 6), (_decode_like(*wide, 9),))
        assert len(lookups) > before


def test_a_graph_run_first_takes_the_numbers_it_was_compiled_with(inductor_ex, monkeypatch):
    # The graph compiled for the first call bakes `end`; a second value makes `end` an input of the region's later
    # graphs. Where that later graph cannot be compiled (Inductor's internal errors under symbolic values) the first
    # graph is still the one run last: the check specialized to a call's layout must pass it its own inputs (the
    # tensors) and keep `end` baked, not the region's current integer inputs (a ValueError unpacking them).
    import warnings

    from thunder_inductor.compile import InductorCompileWarning

    jfn = thunder.jit(_decode_like, executors=[inductor_ex], cache="symbolic values")
    cache, x = torch.randn(3, 40, 5), torch.randn(3, 1, 5)
    jfn(cache, x, 7)
    (fusion,) = _fusions(thunder.last_traces(jfn)[-1])
    region = fusion.sym.call_ctx[fusion.sym.name]
    assert region.dynamic == ()

    def fails(*args):
        raise RuntimeError("Inductor could not compile it")

    monkeypatch.setattr(region, "_load_or_compile", fails)
    with pytest.warns(InductorCompileWarning):
        torch.testing.assert_close(region(cache, x, 3, 8, 5), (_decode_like(cache, x, 8),))
    assert region.dynamic == (1,)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InductorCompileWarning)
        for end in (7, 7, 9, 7):
            torch.testing.assert_close(region(cache, x, 3, end, 5), (_decode_like(cache, x, end),))
