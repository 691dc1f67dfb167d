"""A Llama-style model from transformers (random weights, no downloads) through thunder.jit."""

import pytest
import torch

import thunder

transformers = pytest.importorskip("transformers", reason="transformers is not installed (nox -s tests installs it)")


def _llama():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return transformers.LlamaForCausalLM(config).eval()


@pytest.mark.parametrize("cache", ["constant values", "symbolic values"])
def test_llama_forward_matches_eager_over_lengths(cache):
    model = _llama()
    jmodel = thunder.jit(model, cache=cache)
    with torch.no_grad():
        for length in (8, 9, 12):
            ids = torch.randint(0, 128, (1, length))
            out = jmodel(ids, use_cache=False)
            torch.testing.assert_close(out.logits, model(ids, use_cache=False).logits)
    assert type(out).__name__ == "CausalLMOutputWithPast"
