"""Real models train through thunder.jit exactly like eager.

Each model is built tiny from a config with random weights (no downloads), deep-copied, and trained for three
steps twice from the same seed on the same batches: once eager, once through ``thunder.jit`` of the copy. The
optimizer (AdamW) steps eagerly on both. After every step the loss, every parameter's ``.grad``, every parameter
and every buffer (BatchNorm's running statistics) must match eager within float32 tolerance.

The harness only looks at what a user sees (losses, ``.grad``, parameters), so it holds however thunder
produces gradients (PyTorch's autograd over the torch calls it runs, or its own backward traces).
"""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import thunder

STEPS = 3
VOCAB = 128


# ---------------------------------------------------------------------------------------------
# The harness
# ---------------------------------------------------------------------------------------------


def assert_trains_like_eager(model: nn.Module, batches, loss_fn, *, expected_ops: tuple[str, ...], lr: float = 1e-3):
    """Trains ``model`` eagerly and a deep copy through thunder.jit on ``batches``; ``loss_fn(model, batch)``
    returns the loss. ``expected_ops`` must appear in the interpreted trace (thunder really traced the model's
    math: a silent fallback to eager could not pass). Returns the jitted module."""
    assert len(batches) == STEPS
    eager = model
    jitted_copy = copy.deepcopy(model)
    jm = thunder.jit(jitted_copy)
    # Adam divides each gradient by its running magnitude, so a gradient that is rounding noise (the attention key
    # projection's bias has a mathematically zero gradient: softmax ignores a shift shared by all keys) would become
    # a step of size lr in a random direction. eps=1e-6 (not 1e-8) keeps such noise, ~1e-10, at a step of ~1e-7,
    # while gradients far above eps, as the models' real ones are, still take normal Adam steps.
    eager_opt = torch.optim.AdamW(eager.parameters(), lr=lr, eps=1e-6)
    jit_opt = torch.optim.AdamW(jitted_copy.parameters(), lr=lr, eps=1e-6)
    for step, batch in enumerate(batches):
        # the same seed before each forward: dropout draws the same masks in both
        torch.manual_seed(1000 + step)
        expected = loss_fn(eager, batch)
        torch.manual_seed(1000 + step)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", thunder.torch.opaque.OpaqueFallbackWarning)
            actual = loss_fn(jm, batch)
        _close(actual, expected, f"loss at step {step}")
        expected.backward()
        actual.backward()
        for (name, p), q in zip(eager.named_parameters(), jitted_copy.parameters(), strict=True):
            if p.grad is None:
                assert q.grad is None, f"{name}.grad at step {step}: eager has none, thunder has one"
            else:
                _close(q.grad, p.grad, f"{name}.grad at step {step}")
        eager_opt.step()
        jit_opt.step()
        eager_opt.zero_grad()
        jit_opt.zero_grad()
        _assert_state_equal(jitted_copy, eager, f"after step {step}")

    assert thunder.cache_misses(jm) == 1, "the model was traced more than once for batches of one shape"
    assert thunder.cache_hits(jm) == STEPS - 1
    interpreted = str(thunder.last_traces(jm)[0])
    missing = [op for op in expected_ops if op not in interpreted]
    assert not missing, f"the trace lacks {missing}:\n{interpreted}"
    return jm


def _close(actual, expected, what: str) -> None:
    # torch.testing's float32 defaults (rtol 1.3e-6, atol 1e-5)
    torch.testing.assert_close(actual, expected, msg=lambda m: f"{what}: {m}")


def _assert_state_equal(actual: nn.Module, expected: nn.Module, when: str) -> None:
    for (name, p), q in zip(expected.named_parameters(), actual.parameters(), strict=True):
        _close(q, p, f"parameter {name} {when}")
    for (name, b), c in zip(expected.named_buffers(), actual.buffers(), strict=True):
        _close(c, b, f"buffer {name} {when}")


def _token_batches(batch_size=2, length=12):
    generator = torch.Generator().manual_seed(0)
    return [torch.randint(0, VOCAB, (batch_size, length), generator=generator) for _ in range(STEPS)]


def _causal_lm_loss(model, ids):
    return model(input_ids=ids, labels=ids, use_cache=False).loss


# Every causal LM trace embeds tokens, projects, attends and computes cross entropy in the torch language.
LM_OPS = ("ltorch.embedding(", "ltorch.linear(", "ltorch.scaled_dot_product_attention", "ltorch.cross_entropy(")


# ---------------------------------------------------------------------------------------------
# transformers (4.x and 5.x: `nox -s transformers` runs these against several releases)
# ---------------------------------------------------------------------------------------------

transformers = pytest.importorskip("transformers", reason="transformers is not installed (nox -s tests installs it)")
TRANSFORMERS_5 = int(transformers.__version__.split(".")[0]) >= 5
# transformers 4.x's mixture-of-experts blocks loop over torch.nonzero(routing counts).tolist(): the program is split
# at those reads (docs/values-from-tensor-data.md); 5.x's default runs every expert with static shapes (sort, grouped_mm)


def _hf(config_class: str, model_class: str, **config):
    torch.manual_seed(0)
    return getattr(transformers, model_class)(getattr(transformers, config_class)(**config)).train()


def test_llama():
    model = _hf("LlamaConfig", "LlamaForCausalLM", vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    assert_trains_like_eager(model, _token_batches(), _causal_lm_loss, expected_ops=(*LM_OPS, "ltorch.rsqrt("))


def test_gpt2_with_dropout():
    model = _hf("GPT2Config", "GPT2LMHeadModel", vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                bos_token_id=0, eos_token_id=0)  # dropout 0.1 on attention, residuals and embeddings
    jm = assert_trains_like_eager(model, _token_batches(), _causal_lm_loss, expected_ops=(*LM_OPS, "ltorch.dropout("))
    # attention dropout runs as PyTorch's own attention call, so it draws eager's mask
    assert "ltorch.scaled_dot_product_attention_dropout(" in str(thunder.last_traces(jm)[0])


def test_bert_masked_lm_with_padding():
    model = _hf("BertConfig", "BertForMaskedLM", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
    generator = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(STEPS):
        ids = torch.randint(0, VOCAB, (2, 12), generator=generator)
        attention_mask = torch.ones(2, 12, dtype=torch.long)
        attention_mask[1, 8:] = 0
        labels = torch.where(torch.rand(2, 12, generator=generator) < 0.3, ids, -100)
        labels[0, 0] = ids[0, 0]  # at least one position is predicted
        batches.append((ids, attention_mask, labels))

    def loss(model, batch):
        ids, attention_mask, labels = batch
        return model(input_ids=ids, attention_mask=attention_mask, labels=labels).loss

    assert_trains_like_eager(model, batches, loss, expected_ops=(*LM_OPS, "ltorch.layer_norm(", "ltorch.gelu("))


def test_t5_encoder_decoder():
    model = _hf("T5Config", "T5ForConditionalGeneration", vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                num_heads=4, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    generator = torch.Generator().manual_seed(0)
    batches = [(torch.randint(2, VOCAB, (2, 12), generator=generator), torch.randint(2, VOCAB, (2, 8), generator=generator))
               for _ in range(STEPS)]

    def loss(model, batch):
        ids, labels = batch
        return model(input_ids=ids, labels=labels, use_cache=False).loss

    assert_trains_like_eager(model, batches, loss,
                             expected_ops=("ltorch.embedding(", "ltorch.linear(", "ltorch.cross_entropy(", "ltorch.relu("))


# Mixture of experts. transformers 5 routes tokens with torch.topk and, by default ("grouped_mm" experts), sorts
# the token-expert pairs by expert (torch.sort, histc, cumsum) and runs one grouped matmul per projection: every
# shape is static. The router's load-balancing loss (output_router_logits) adds one_hot and more routing math.
MOE_OPS = (*LM_OPS, "topk", "ltorch.softmax(")


def _mixtral(**config):
    return _hf("MixtralConfig", "MixtralForCausalLM", vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
               num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
               num_experts_per_tok=2, max_position_embeddings=64, output_router_logits=True, **config)


def _with_output_capturing_hooks(model):
    """transformers installs the forward hooks that collect router logits on the first forward that asks for them,
    storing closures into the modules' hook dicts. Done inside a jitted call, that hands objects created while
    tracing to the outside, which thunder refuses (see test_moe_first_call_installing_hooks_inside_jit): install
    them with one eager forward first, as a model that has run once has them."""
    with torch.no_grad():
        model(input_ids=torch.zeros(1, 4, dtype=torch.long), use_cache=False)
    return model


def test_mixtral_moe():
    model = _with_output_capturing_hooks(_mixtral())
    if TRANSFORMERS_5:
        assert model.config._experts_implementation == "grouped_mm"
    assert_trains_like_eager(model, _token_batches(), _causal_lm_loss, expected_ops=(*MOE_OPS, "sort") if TRANSFORMERS_5 else MOE_OPS)


def test_qwen2_moe_with_shared_expert():
    model = _hf("Qwen2MoeConfig", "Qwen2MoeForCausalLM", vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                moe_intermediate_size=32, shared_expert_intermediate_size=32, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                norm_topk_prob=True, max_position_embeddings=64, output_router_logits=True)
    assert_trains_like_eager(_with_output_capturing_hooks(model), _token_batches(), _causal_lm_loss,
                             expected_ops=(*MOE_OPS, "ltorch.sigmoid("))


@pytest.mark.xfail(TRANSFORMERS_5, strict=True, raises=thunder.core.errors.UnsupportedError,
                   reason="transformers 5's first forward with output_router_logits stores new hook closures into "
                          "module._forward_hooks (module.py: self._forward_hooks[handle.id] = hook); the epilogue "
                          "replays stores of tensors, numbers, containers and outside objects, not of functions "
                          "created while tracing")
def test_moe_first_call_installing_hooks_inside_jit():
    jm = thunder.jit(_mixtral())
    jm(input_ids=torch.zeros(1, 4, dtype=torch.long), use_cache=False)


# experts_implementation='eager' loops over the rows of torch.nonzero(routing counts) and branches on them: the
# program is split at each read (docs/values-from-tensor-data.md)
@pytest.mark.skipif(not TRANSFORMERS_5, reason="experts implementations are a transformers 5 setting (4.x always loops)")
def test_mixtral_eager_experts_loop_over_routing_data():
    model = _with_output_capturing_hooks(_mixtral())
    model.set_experts_implementation("eager")
    assert_trains_like_eager(model, _token_batches(), _causal_lm_loss, expected_ops=MOE_OPS)


# ---------------------------------------------------------------------------------------------
# litgpt
# ---------------------------------------------------------------------------------------------


def test_litgpt_llama_style_gpt():
    litgpt = pytest.importorskip("litgpt", reason="litgpt is not installed (nox -s tests installs it)")
    torch.manual_seed(0)
    config = litgpt.Config(block_size=64, vocab_size=VOCAB, padded_vocab_size=VOCAB, n_layer=2, n_head=4, n_embd=32,
                           n_query_groups=2, intermediate_size=64, mlp_class_name="LLaMAMLP", norm_class_name="RMSNorm",
                           bias=False, rotary_percentage=1.0, parallel_residual=False)
    model = litgpt.GPT(config)

    def loss(model, ids):
        logits = model(ids[:, :-1])
        return F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())

    assert_trains_like_eager(model, _token_batches(), loss, expected_ops=LM_OPS[:3])


# ---------------------------------------------------------------------------------------------
# Plain PyTorch
# ---------------------------------------------------------------------------------------------


def _classification_batches(shape, classes=4):
    generator = torch.Generator().manual_seed(0)
    return [(torch.randn(*shape, generator=generator), torch.randint(0, classes, (shape[0],), generator=generator))
            for _ in range(STEPS)]


def _classification_loss(model, batch):
    x, target = batch
    return F.cross_entropy(model(x), target)


def test_mlp_with_dropout():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Dropout(0.1), nn.Linear(32, 4))
    assert_trains_like_eager(model, _classification_batches((8, 16)), _classification_loss,
                             expected_ops=("ltorch.linear(", "ltorch.gelu(", "ltorch.dropout("))


def test_cnn_with_batchnorm_updates_running_stats():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4),
    )
    before = copy.deepcopy(model[1].running_mean)
    assert_trains_like_eager(model, _classification_batches((4, 3, 8, 8)), _classification_loss,
                             expected_ops=("conv2d", "batch_norm", "max_pool2d"))
    assert model[1].num_batches_tracked.item() == STEPS and not torch.equal(model[1].running_mean, before)


class _LSTMRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1])


def test_lstm():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    batches = [(torch.randn(4, 10, 8, generator=generator), torch.randn(4, 1, generator=generator)) for _ in range(STEPS)]
    assert_trains_like_eager(_LSTMRegressor(), batches, lambda m, b: F.mse_loss(m(b[0]), b[1]),
                             expected_ops=("lstm", "ltorch.linear("))


class _Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)

    def forward(self, x, padding_mask):
        return self.layer(x, src_key_padding_mask=padding_mask)


def test_transformer_encoder_layer_with_padding_mask():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    batches = []
    for _ in range(STEPS):
        padding_mask = torch.zeros(4, 10, dtype=torch.bool)
        padding_mask[1:, 7:] = True
        batches.append((torch.randn(4, 10, 32, generator=generator), padding_mask,
                        torch.randn(4, 10, 32, generator=generator)))
    # regression on random targets: the layer ends in LayerNorm, so a loss of its output alone would have
    # near-zero gradients that AdamW's normalization turns into noise
    assert_trains_like_eager(_Encoder(), batches, lambda m, b: F.mse_loss(m(b[0], b[1]), b[2]),
                             expected_ops=("multi_head_attention_forward", "ltorch.layer_norm(", "ltorch.dropout("))


def test_transformer_encoder_stack():
    # nn.TransformerEncoder walks its layers' submodules (dict iteration of `_modules`) and deep-copies the layer
    torch.manual_seed(0)
    model = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True), 2)
    generator = torch.Generator().manual_seed(0)
    batches = [(torch.randn(4, 10, 32, generator=generator), torch.randn(4, 10, 32, generator=generator))
               for _ in range(STEPS)]
    assert_trains_like_eager(model, batches, lambda m, b: F.mse_loss(m(b[0]), b[1]),
                             expected_ops=("multi_head_attention_forward", "ltorch.layer_norm(", "ltorch.dropout("))
