"""A Llama-style model from transformers (random weights, no downloads) through thunder.jit."""

import pytest
import torch

import thunder

transformers = pytest.importorskip("transformers", reason="transformers is not installed (nox -s tests installs it)")


def _llama(seed=0):
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return transformers.LlamaForCausalLM(config)


def test_llama_symbolic_values_serve_lengths_8_to_40():
    model = _llama().eval()
    jmodel = thunder.jit(model, cache="symbolic values")
    with torch.no_grad():
        for length in range(8, 41):
            ids = torch.randint(0, 128, (1, length))
            out = jmodel(ids, use_cache=False)
            torch.testing.assert_close(out.logits, model(ids, use_cache=False).logits)
    assert type(out).__name__ == "CausalLMOutputWithPast"
    assert thunder.cache_misses(jmodel) <= 2


def test_llama_constant_values_compiles_per_length():
    model = _llama().eval()
    jmodel = thunder.jit(model)
    with torch.no_grad():
        for length in (8, 9, 10):
            ids = torch.randint(0, 128, (1, length))
            torch.testing.assert_close(jmodel(ids, use_cache=False).logits, model(ids, use_cache=False).logits)
    assert thunder.cache_misses(jmodel) == 3


def test_llama_training_over_varying_lengths():
    model, reference = _llama(), _llama()
    jmodel = thunder.jit(model, cache="symbolic values")
    for length in (8, 13, 21):
        ids = torch.randint(0, 128, (2, length))
        loss = jmodel(ids, labels=ids, use_cache=False).loss
        ref_loss = reference(ids, labels=ids, use_cache=False).loss
        torch.testing.assert_close(loss, ref_loss)
        loss.backward()
        ref_loss.backward()
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
    assert thunder.cache_misses(jmodel) <= 2
