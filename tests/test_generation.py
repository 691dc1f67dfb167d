"""Generation with KV caches: stores of values made inside the call into outside caches, a jitted module's
generate(), and decode loops (HF transformers, litgpt), tokens equal to eager's."""

import re

import pytest
import torch
import torch.nn as nn

import thunder
from helpers.tiny_fusion import TinyFuser
from thunder.core.errors import UnsupportedError

CACHE_OPTIONS = ("constant values", "symbolic values")


# ---------------------------------------------------------------------------------------------------------
# Stores into outside objects of values created inside the call
# ---------------------------------------------------------------------------------------------------------


class Layer:  # a plain class whose objects the program makes and keeps outside (like an HF cache layer)
    def __init__(self):
        self.keys = None
        self.dtype = None

    def update(self, k):
        self.keys = k if self.keys is None else torch.cat([self.keys, k], dim=0)
        self.dtype, self.device, self.shape = k.dtype, k.device, self.keys.shape
        return self.keys


class Cache:
    def __init__(self):
        self.layers = []
        self.meta = {}


def _step(cache, x):
    if not cache.layers:
        cache.layers.append(Layer())
    keys = cache.layers[0].update(x * 2)
    cache.meta["last"] = [keys[-1:], {"dtype": keys.dtype, "size": keys.shape}]
    cache.latest = cache.layers[0]  # one object kept in two places stays one object
    return keys.sum(0)


def _state(cache):
    layer = cache.layers[0]
    return (len(cache.layers), layer.keys, layer.dtype, layer.device, layer.shape, cache.meta["last"][0],
            cache.meta["last"][1], cache.latest is layer, type(layer))


@pytest.mark.parametrize("cache_option", CACHE_OPTIONS)
def test_new_values_and_objects_stored_outside_replay_on_every_call(cache_option):
    eager_cache, jit_cache = Cache(), Cache()
    jstep = thunder.jit(_step, cache=cache_option)
    for i in range(4):
        x = torch.randn(2 + i % 2, 3)
        torch.testing.assert_close(jstep(jit_cache, x), _step(eager_cache, x))
        (n, keys, dtype, device, shape, last, meta, same, tp) = _state(jit_cache)
        (en, ekeys, edtype, edevice, eshape, elast, emeta, esame, etp) = _state(eager_cache)
        assert (n, dtype, device, shape, meta, same, tp) == (en, edtype, edevice, eshape, emeta, esame, etp)
        assert type(dtype) is torch.dtype and type(device) is torch.device and type(shape) is torch.Size
        assert type(meta["size"]) is torch.Size
        torch.testing.assert_close(keys, ekeys)
        torch.testing.assert_close(last, elast)
    if cache_option == "symbolic values":  # the growing cache length is a symbol: later calls reuse a program
        assert thunder.cache_hits(jstep) >= 1


@pytest.mark.parametrize("cache_option", CACHE_OPTIONS)
def test_returned_output_holds_this_calls_cache_object(cache_option):
    # transformers 4.x's generate takes the cache for the next step from outputs.past_key_values: an output
    # (a dataclass, or a plain object) holding an argument must hold this call's argument, not the first call's
    import dataclasses

    @dataclasses.dataclass
    class Output:
        logits: torch.Tensor
        cache: object

    class Holder:
        def __init__(self, cache):
            self.cache = cache

    def step(x, cache):  # no write to outside state: nothing else makes an epilogue
        return Output(x * 2, cache), Holder(cache)

    jstep = thunder.jit(step, cache=cache_option)
    for _ in range(3):
        cache = Cache()
        out, holder = jstep(torch.ones(2), cache)
        assert out.cache is cache and holder.cache is cache
        torch.testing.assert_close(out.logits, torch.full((2,), 2.0))


def test_new_object_is_fresh_on_every_call_as_in_eager():
    class Box:
        pass

    def f(holder, x):
        b = Box()
        b.value = x + 1
        holder.append(b)
        return x

    holder = []
    jf = thunder.jit(f)
    for i in range(3):
        jf(holder, torch.full((2,), float(i)))
    assert len({id(b) for b in holder}) == 3
    for i, b in enumerate(holder):
        assert type(b) is Box
        torch.testing.assert_close(b.value, torch.full((2,), i + 1.0))


def test_new_object_that_refers_to_itself_is_refused_with_the_store_location():
    class Node:
        pass

    def f(holder, x):
        n = Node()
        n.me = n
        holder.append(n)
        return x

    with pytest.raises(UnsupportedError, match="refers back to itself"):
        thunder.jit(f)([], torch.ones(2))


# ---------------------------------------------------------------------------------------------------------
# Methods of a jitted module that call self(...) / self.forward run the jitted forward
# ---------------------------------------------------------------------------------------------------------


class Doubler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.calls = 0

    def forward(self, x):
        return self.lin(x) * 2

    def twice(self, x):
        assert isinstance(self, Doubler) and type(self).forward is not None
        self.calls += 1  # written into the original module, as eager would
        return self(x) + self.forward(x) + self.helper(x)

    def helper(self, x):
        return self(x)


def test_module_methods_calling_self_run_the_jitted_forward():
    model = Doubler()
    jmodel = thunder.jit(model)
    x = torch.randn(2, 3)
    expected = model.twice(x)
    torch.testing.assert_close(jmodel.twice(x), expected)
    assert thunder.cache_misses(jmodel) == 1 and thunder.cache_hits(jmodel) == 2
    assert model.calls == 2  # one eager call, one through the jitted module's view
    import inspect

    assert list(inspect.signature(jmodel.forward).parameters) == ["x"]


# ---------------------------------------------------------------------------------------------------------
# HF transformers: decode loops with DynamicCache, generate()
# ---------------------------------------------------------------------------------------------------------


def _llama(seed=0):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed (nox -s tests installs it)")
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return transformers, transformers.LlamaForCausalLM(config).eval()


def _static_cache(transformers, config, max_cache_len, batch=1):
    import inspect

    if "max_batch_size" in inspect.signature(transformers.StaticCache).parameters:  # transformers 4.x
        return transformers.StaticCache(config=config, max_batch_size=batch, max_cache_len=max_cache_len)
    return transformers.StaticCache(config=config, max_cache_len=max_cache_len)


def _decode(fn, ids, cache, steps):
    out = fn(input_ids=ids, past_key_values=cache, use_cache=True)
    tokens = []
    for _ in range(steps):
        token = out.logits[:, -1:].argmax(-1)
        tokens.append(token)
        out = fn(input_ids=token, past_key_values=cache, use_cache=True)
    return torch.cat(tokens, 1), out.logits


@pytest.mark.parametrize("cache_option", CACHE_OPTIONS)
@pytest.mark.parametrize("with_config", [True, False], ids=["layers-made-up-front", "layers-made-by-the-model"])
def test_hf_decode_loop_with_dynamic_cache(cache_option, with_config):
    transformers, model = _llama()
    jmodel = thunder.jit(model, cache=cache_option)

    layered = hasattr(transformers.DynamicCache(), "layers")  # transformers 5: a cache holds layer objects
    if with_config and not layered:
        pytest.skip("DynamicCache(config=...) making its layers up front is transformers 5's API")

    def new_cache():
        return transformers.DynamicCache(config=model.config) if with_config else transformers.DynamicCache()

    ids = torch.randint(0, 64, (1, 5))
    with torch.no_grad():
        expected, elogits = _decode(model, ids, new_cache(), 5)
        jcache = new_cache()
        tokens, logits = _decode(jmodel, ids, jcache, 5)
    assert torch.equal(tokens, expected)
    torch.testing.assert_close(logits, elogits)
    assert jcache.get_seq_length() == 10
    if layered:
        layer = jcache.layers[0]
        assert type(layer.keys) is torch.Tensor and layer.keys.dtype is torch.float32
        assert getattr(layer, "dtype", torch.float32) is torch.float32  # transformers 5.23 keeps the dtype, 5.24 not
        assert type(layer) is transformers.cache_utils.DynamicLayer
    else:
        assert len(jcache.key_cache) == 2 and jcache.key_cache[0].shape[-2] == 10
    # prefill and decode; with constant values every cache length is its own program
    assert thunder.cache_misses(jmodel) == (2 if cache_option == "symbolic values" else 6)


@pytest.mark.parametrize("cache_option", CACHE_OPTIONS)
def test_hf_generate_runs_the_jitted_forward_at_every_step(cache_option):
    transformers, model = _llama()
    jmodel = thunder.jit(model, cache=cache_option)
    new_tokens = 6
    for length in (3, 5, 8):
        ids = torch.randint(0, 64, (1, length))
        expected = model.generate(ids, max_new_tokens=new_tokens, do_sample=False,
                                  past_key_values=transformers.DynamicCache())
        before = thunder.cache_hits(jmodel) + thunder.cache_misses(jmodel)
        out = jmodel.generate(ids, max_new_tokens=new_tokens, do_sample=False,
                              past_key_values=transformers.DynamicCache())
        assert torch.equal(out, expected)
        # one forward per new token: the prefill makes the first, each decode step one more
        assert thunder.cache_hits(jmodel) + thunder.cache_misses(jmodel) - before == new_tokens
    if cache_option == "symbolic values":
        assert thunder.cache_misses(jmodel) == 2  # prefill and decode, whatever the lengths


@pytest.mark.parametrize("cache_option", CACHE_OPTIONS)
def test_hf_generate_with_static_cache(cache_option):
    transformers, model = _llama()
    jmodel = thunder.jit(model, cache=cache_option)
    for length in (3, 5):
        ids = torch.randint(0, 64, (1, length))
        expected = model.generate(ids, max_new_tokens=4, do_sample=False,
                                  past_key_values=_static_cache(transformers, model.config, 32))
        out = jmodel.generate(ids, max_new_tokens=4, do_sample=False,
                              past_key_values=_static_cache(transformers, model.config, 32))
        assert torch.equal(out, expected)
    # the static cache keeps decode shapes fixed: one decode program under either option; with constant values
    # each prompt length is its own prefill
    assert thunder.cache_misses(jmodel) == (2 if cache_option == "symbolic values" else 3)
    assert thunder.cache_hits(jmodel) + thunder.cache_misses(jmodel) == 8


def test_hf_generate_compiles_once_for_every_batch_size_and_length():
    # The count: 10 prompt lengths x 3 batch sizes, output lengths varying too. Under symbolic values a
    # batch size that happens to equal a sequence length or a head count is no new program; a batch of one is (its
    # size 1 is specialized, as in torch.compile): 2 programs for batch 1, 2 for every other batch size.
    transformers, model = _llama()
    jmodel = thunder.jit(model, cache="symbolic values")
    for batch in (1, 3, 4):
        for length in range(3, 13):
            ids = torch.randint(1, 64, (batch, length))
            kwargs = dict(max_new_tokens=2 + length % 3, do_sample=False, pad_token_id=0)
            expected = model.generate(ids, past_key_values=transformers.DynamicCache(), **kwargs)
            out = jmodel.generate(ids, past_key_values=transformers.DynamicCache(), **kwargs)
            assert torch.equal(out, expected)
    assert thunder.cache_misses(jmodel) == 4


def test_hf_generate_sampling_batch_with_left_padding():
    transformers, model = _llama()
    jmodel = thunder.jit(model, cache="symbolic values")
    ids = torch.randint(1, 64, (2, 6))
    mask = torch.ones_like(ids)
    ids[1, :2], mask[1, :2] = 0, 0  # left padding
    kwargs = dict(attention_mask=mask, max_new_tokens=5, do_sample=True, top_k=10, pad_token_id=0)
    torch.manual_seed(7)
    expected = model.generate(ids, past_key_values=transformers.DynamicCache(), **kwargs)
    torch.manual_seed(7)
    out = jmodel.generate(ids, past_key_values=transformers.DynamicCache(), **kwargs)
    assert torch.equal(out, expected)
    assert thunder.cache_hits(jmodel) + thunder.cache_misses(jmodel) == 5


# ---------------------------------------------------------------------------------------------------------
# litgpt: GPT with set_kv_cache, its generate loop
# ---------------------------------------------------------------------------------------------------------


def _litgpt_model(seed=0):
    litgpt = pytest.importorskip("litgpt", reason="litgpt is not installed (nox -s tests installs it)")
    torch.manual_seed(seed)
    config = litgpt.Config(block_size=64, vocab_size=64, padded_vocab_size=64, n_layer=2, n_head=4, n_embd=32,
                           n_query_groups=2, intermediate_size=64, mlp_class_name="LLaMAMLP", norm_class_name="RMSNorm",
                           bias=False, rotary_percentage=1.0, parallel_residual=False)
    return litgpt.GPT(config).eval()


def _litgpt_generate(model, prompt, new_tokens):
    from litgpt.generate.base import generate

    model.set_kv_cache(batch_size=1)  # through a jitted module: set on the original (one state)
    torch.manual_seed(0)
    with torch.no_grad():
        return generate(model, prompt, prompt.numel() + new_tokens, temperature=1.0, top_k=1)


@pytest.mark.parametrize("cache_option", CACHE_OPTIONS)
def test_litgpt_generate_with_kv_cache(cache_option):
    model = _litgpt_model()
    jmodel = thunder.jit(model, cache=cache_option)
    for length in (4, 7):
        prompt = torch.randint(0, 64, (length,))
        expected = _litgpt_generate(model, prompt, 5)
        before = thunder.cache_hits(jmodel) + thunder.cache_misses(jmodel)
        assert torch.equal(_litgpt_generate(jmodel, prompt, 5), expected)
        assert thunder.cache_hits(jmodel) + thunder.cache_misses(jmodel) - before == 5
    trace = thunder.last_traces(jmodel)[-1]
    # the cache update stays one in-place store of the new rows (no functional copy of the whole cache)
    assert "torch.Tensor.index_copy_(" in str(trace) and "torch.index_copy(" not in str(trace)
    if cache_option == "symbolic values":
        assert thunder.cache_misses(jmodel) == 2


def _inductor_or_skip():
    inductor = thunder.extend.get_executor("inductor")
    if inductor is None or not inductor.availability()[0]:
        pytest.skip("the inductor executor (thunder-inductor) is not installed or has no C++ compiler")
    return inductor


@pytest.mark.slow  # C++ compiles of Inductor (skipped where thunder-inductor is not installed)
def test_hf_generate_with_static_cache_under_the_inductor_executor():
    # StaticCache's decode computes its cache positions in the step (arange(n) + cumulative_length): they are
    # computed before the region and checked, and the stores join it (thunder.extend.regions)
    inductor = _inductor_or_skip()
    transformers, model = _llama()
    jmodel = thunder.jit(model, cache="symbolic values", executors=[inductor])
    for length in (5, 8):
        ids = torch.randint(1, 64, (1, length))
        kwargs = dict(max_new_tokens=4, do_sample=False, pad_token_id=0)
        expected = model.generate(ids, past_key_values=_static_cache(transformers, model.config, 32), **kwargs)
        out = jmodel.generate(ids, past_key_values=_static_cache(transformers, model.config, 32), **kwargs)
        assert torch.equal(out, expected)
    assert thunder.cache_misses(jmodel) == 2
    decode = str(thunder.last_traces(jmodel)[-1])
    assert "index_copy_(" in decode and not re.search(r"^  torch\.Tensor\.index_copy_\(", decode, re.MULTILINE)


@pytest.mark.slow  # C++ compiles of Inductor (skipped where thunder-inductor is not installed)
def test_litgpt_generate_with_the_inductor_executor_stores_into_the_cache_in_its_region():
    # litgpt's KV-cache stores join the Inductor region computing the new keys and values: one region per decode
    # step, the tokens eager's, two programs
    import re

    inductor = _inductor_or_skip()
    model = _litgpt_model()
    jmodel = thunder.jit(model, cache="symbolic values", executors=[inductor])
    for length in (4, 7):
        prompt = torch.randint(0, 64, (length,))
        assert torch.equal(_litgpt_generate(jmodel, prompt, 5), _litgpt_generate(model, prompt, 5))
    trace = str(thunder.last_traces(jmodel)[-1])
    assert re.search(r"^  torch\.Tensor\.index_copy_\(", trace, re.MULTILINE) is None, trace
    assert trace.count("= inductor_fusion") == 1 and thunder.cache_misses(jmodel) == 2


# ---------------------------------------------------------------------------------------------------------
# What decode code does with symbolic sizes (each once made every prompt length its own program)
# ---------------------------------------------------------------------------------------------------------


def test_size_plus_symbolic_size_stays_symbolic():
    def f(x, c):  # litgpt's apply_rope: cos.shape[0:1] + (1,) * dims_diff + cos.shape[1:]
        shape = c.shape[0:1] + (1,) + c.shape[1:]
        return x * c.view(*shape), shape

    jf = thunder.jit(f, cache="symbolic values")
    for length in (3, 4, 5):
        x, c = torch.randn(2, 4, length, 8), torch.randn(2, length, 8)
        out, shape = jf(x, c)
        expected, eshape = f(x, c)
        torch.testing.assert_close(out, expected)
        assert shape == eshape and type(shape) is torch.Size
    assert thunder.cache_misses(jf) == 1


@pytest.mark.parametrize("cache_option", CACHE_OPTIONS)
@pytest.mark.parametrize("args", [(2, 1), (3, -1), (2, None), (1, 0), (0, 1)])
def test_repeat_interleave_with_a_number_of_repeats(cache_option, args):
    repeats, dim = args

    def f(x):
        return x.repeat_interleave(repeats, dim=dim) + torch.repeat_interleave(x, repeats, dim) * 2

    jf = thunder.jit(f, cache=cache_option)
    for length in (3, 4):
        x = torch.randn(2, length, 4)
        torch.testing.assert_close(jf(x), f(x))
    assert thunder.cache_misses(jf) == (1 if cache_option == "symbolic values" else 2)
    assert "repeat_interleave" in str(thunder.last_traces(jf)[0])


def test_repeat_interleave_with_tensor_repeats():
    def f(x, r):
        return x.repeat_interleave(r, dim=0, output_size=3)

    x, r = torch.randn(2, 3), torch.tensor([1, 2])
    torch.testing.assert_close(thunder.jit(f)(x, r), f(x, r))
    # without output_size the size is read from the repeats where the program calls it
    torch.testing.assert_close(thunder.jit(lambda x, r: x.repeat_interleave(r, dim=0))(x, r), f(x, r))


class Norm(nn.Module):  # litgpt's RMSNorm keeps its reduction dim as an int attribute
    def __init__(self):
        super().__init__()
        self.dim = -1

    def forward(self, x):
        return x / x.pow(2).mean(dim=self.dim, keepdim=True).sqrt() + x.softmax(self.dim) + x.sum(self.dim, True)


def test_symbolic_module_int_as_a_dim():
    model = Norm()
    jmodel = thunder.jit(model, cache="symbolic values")
    for length in (3, 5):
        x = torch.randn(2, length)
        torch.testing.assert_close(jmodel(x), model(x))
    model.dim = 0  # the dim is checked: a new value gets its own program
    x = torch.randn(2, 5)
    torch.testing.assert_close(jmodel(x), model(x))
    assert thunder.cache_misses(jmodel) == 2


# ---------------------------------------------------------------------------------------------------------
# The KV-cache store stays in place when a fusion executor could claim the view it writes through
# ---------------------------------------------------------------------------------------------------------


class _ViewFuser(TinyFuser):  # claims views too, as the Inductor and nvFuser executors do
    def claimable_prim(self, bsym) -> bool:
        return super().claimable_prim(bsym) or bsym.sym.name in ("slice", "reshape", "broadcast_in_dim")


class _KVCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("k", torch.zeros(2, 4, 16, 8))

    def forward(self, pos, x, upto: int):
        k = self.k[: x.shape[0], ...].index_copy_(2, pos, x)  # litgpt's KVCache.forward
        return (k[..., :upto, :] * 2).sum(-1)


@pytest.mark.parametrize("cache_option", CACHE_OPTIONS)
def test_kv_cache_store_stays_in_place_with_a_fusion_executor_that_claims_views(cache_option):
    from thunder.extend import get_executor, register_executor

    fuser = get_executor("view_fuser") or register_executor(_ViewFuser("view_fuser", priority=50, default=False))
    model, jmodel_model = _KVCache(), _KVCache()
    jmodel = thunder.jit(jmodel_model, executors=[fuser], cache=cache_option)
    with torch.no_grad():
        for step, pos in enumerate((3, 4, 5)):
            x = torch.randn(2, 4, 1, 8, generator=torch.Generator().manual_seed(step))
            expected = model(torch.tensor([pos]), x, pos + 1)
            torch.testing.assert_close(jmodel(torch.tensor([pos]), x, pos + 1), expected, rtol=0, atol=0)
            torch.testing.assert_close(jmodel_model.k, model.k, rtol=0, atol=0)
    trace = str(thunder.last_traces(jmodel)[-1])
    assert "tiny_fusion" in trace  # the fuser made a region (of the read of the updated cache)
    assert "torch.Tensor.index_copy_(" in trace and "torch.index_copy(" not in trace, trace
    assert "__setitem__" not in trace  # no store of a whole new cache into the old one
