"""Mixture-of-experts models whose routing reads tensor data in Python (docs/values-from-tensor-data.md):
forward, backward and AdamW steps equal to eager, with the number of continuations traced reported."""

import copy
import time

import pytest
import torch

import thunder

pytestmark = pytest.mark.slow  # each model traces a few dozen segments: tens of seconds on CPU


def train_like_eager(model, batches, loss_fn, *, steps=3):
    """Trains ``model`` eagerly and a copy jitted, with AdamW: loss, every grad and every parameter equal after
    each step. Returns what the jit did (cache misses, continuations, calls run again on the split segments, segments
    of the last call, seconds)."""
    jitted_model = copy.deepcopy(model)
    jm = thunder.jit(jitted_model)
    opt_e = torch.optim.AdamW(model.parameters(), lr=1e-2)
    opt_j = torch.optim.AdamW(jitted_model.parameters(), lr=1e-2)
    start = time.perf_counter()
    for step in range(steps):
        batch = batches[step % len(batches)]
        loss_e = loss_fn(model, batch)
        loss_e.backward()
        loss_j = loss_fn(jm, batch)
        loss_j.backward()
        torch.testing.assert_close(loss_j, loss_e, rtol=1e-5, atol=1e-5)
        for (name, pe), pj in zip(model.named_parameters(), jitted_model.parameters()):
            if pe.grad is None:
                assert pj.grad is None or not pj.grad.any(), name
            else:
                torch.testing.assert_close(pj.grad, pe.grad, rtol=1e-4, atol=1e-5, msg=lambda m: f"{name}: {m}")
        opt_e.step()
        opt_j.step()
        opt_e.zero_grad()
        opt_j.zero_grad()
        for (name, pe), pj in zip(model.named_parameters(), jitted_model.parameters()):
            # Adam divides by the root of the squared grads: rounding-level grad differences of near-zero grads
            # move a parameter by up to ~1e-4 of lr
            torch.testing.assert_close(pj, pe, rtol=1e-3, atol=1e-4, msg=lambda m: f"{name}: {m}")
    segments = sum(1 for t in thunder.last_traces(jm) if t.provenance and "Segment " in str(t.provenance))
    return {"cache_misses": thunder.cache_misses(jm), "continuations": thunder.compile_stats(jm).continuations,
            "size_restarts": thunder.compile_stats(jm).size_restarts, "segments": segments,
            "seconds": time.perf_counter() - start}


def _hf_loss(model, ids):
    return model(ids, labels=ids).loss


def _tiny_hf(config_cls, model_cls, **kwargs):
    config = config_cls(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        num_key_value_heads=2, max_position_embeddings=64, **kwargs)
    config._attn_implementation = "eager"
    config._experts_implementation = "eager"  # the routing loop over experts hit (transformers 5.x)
    return model_cls(config)


_HF_MOE = {
    "mixtral": ("MixtralConfig", "MixtralForCausalLM", dict(intermediate_size=64, num_local_experts=8,
                                                            num_experts_per_tok=2)),
    "qwen2-moe": ("Qwen2MoeConfig", "Qwen2MoeForCausalLM", dict(intermediate_size=64, moe_intermediate_size=32,
                                                                shared_expert_intermediate_size=32, num_experts=8,
                                                                num_experts_per_tok=2)),
}


@pytest.mark.parametrize("name", sorted(_HF_MOE))
def test_transformers_moe_trains_like_eager(name):
    transformers = pytest.importorskip("transformers")
    config_cls, model_cls, kwargs = _HF_MOE[name]
    torch.manual_seed(0)
    model = _tiny_hf(getattr(transformers, config_cls), getattr(transformers, model_cls), **kwargs)
    batches = [torch.randint(0, 128, (2, 16)) for _ in range(2)]
    report = train_like_eager(model, batches, _hf_loss)
    print(name, report)


def test_litgpt_llama_moe_trains_like_eager():
    litgpt = pytest.importorskip("litgpt")
    torch.manual_seed(0)
    config = litgpt.Config(block_size=32, vocab_size=128, padded_vocab_size=128, n_layer=2, n_head=4, n_query_groups=2,
                           n_embd=32, mlp_class_name="LLaMAMoE", moe_intermediate_size=48, n_expert=8,
                           n_expert_per_token=2, norm_class_name="RMSNorm", bias=False)
    model = litgpt.GPT(config)
    batches = [torch.randint(0, 128, (2, 16)) for _ in range(2)]

    def loss_fn(m, ids):
        logits = m(ids)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids.reshape(-1))

    report = train_like_eager(model, batches, loss_fn)
    print("litgpt LLaMAMoE", report)
