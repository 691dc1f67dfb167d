"""What each rank runs: a model trained under DDP or FSDP2 eagerly and through thunder.jit, compared step by step.

Both copies start from the same weights on every rank (seeded init) and see the same per-rank batches, so the
engine communicates the same gradients for both; each step's loss, every gradient (a DTensor's gathered in full)
and every parameter after the optimizer step must match.
"""

from __future__ import annotations

import copy
import warnings

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

import thunder

STEPS = 5
VOCAB = 128
FLOAT32 = {}  # torch.testing's float32 defaults
BFLOAT16 = {"rtol": 1.6e-2, "atol": 1e-2}


# models -------------------------------------------------------------------------------------------------------------

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 8)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def net():
    torch.manual_seed(0)
    return Net(), lambda model, x: model(x).pow(2).mean()


def net_with_unused():
    """A parameter the forward never uses: DDP must be told (find_unused_parameters) and leaves its .grad None."""
    model, loss_fn = net()
    model.unused = nn.Linear(8, 8)
    return model, loss_fn


def litgpt_gpt():
    import litgpt

    config = litgpt.Config(block_size=32, vocab_size=VOCAB, padded_vocab_size=VOCAB, n_layer=2, n_head=4, n_embd=32,
                           n_query_groups=2, intermediate_size=64, mlp_class_name="LLaMAMLP",
                           norm_class_name="RMSNorm", bias=False, rotary_percentage=1.0, parallel_residual=False)
    torch.manual_seed(0)
    return litgpt.GPT(config), lambda model, ids: F.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())


def hf_llama():
    import transformers

    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    return (transformers.LlamaForCausalLM(config).train(),
            lambda model, ids: model(input_ids=ids, labels=ids, use_cache=False).loss)


MODELS = {"net": net, "net_with_unused": net_with_unused, "litgpt_gpt": litgpt_gpt, "hf_llama": hf_llama}


# wrappers: (eager model, model to jit) from one model --------------------------------------------------------------

def wrap_ddp(model, options=(), **_):
    bucket_mb = 0.01 if "small_buckets" in options else 25.0  # 10 KB: a tiny model's gradients in many buckets
    return thunder.distributed.ddp(model, find_unused_parameters="find_unused_parameters" in options,
                                   static_graph="static_graph" in options, bucket_size_in_mb=bucket_mb)


def wrap_fsdp(model, options=(), mp_policy=None):
    if "blocks_only" in options:  # fully_shard on the blocks and on the rest's parameters, not on the root module
        from torch.distributed.fsdp import fully_shard

        for block in model.blocks:
            fully_shard(block)
        fully_shard(model.head)
        return model
    strategy = "ZERO2" if "zero2" in options else "ZERO3"
    model = thunder.distributed.fsdp(model, sharding_strategy=strategy, bucketing_strategy="BLOCK", mp_policy=mp_policy)
    assert all(type(p).__name__ == "DTensor" for p in model.parameters()), "a parameter was left unsharded"
    return model


WRAPPERS = {"ddp": wrap_ddp, "fsdp": wrap_fsdp}
OPTIMIZERS = {
    "sgd_momentum": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    # eps=1e-6: see tests/test_training_models.py (a rounding-noise gradient must not become a step of size lr)
    "adamw": lambda params: torch.optim.AdamW(params, lr=1e-3, eps=1e-6),
}


# comparisons --------------------------------------------------------------------------------------------------------

def _full(t):
    return t.full_tensor() if type(t).__name__ == "DTensor" else t


def assert_same_state(actual, expected, when: str, tolerance: dict) -> None:
    for (name, p), q in zip(expected.named_parameters(), actual.parameters(), strict=True):
        assert (p.grad is None) == (q.grad is None), f"{name}.grad {when}: one of eager and thunder has none"
        if p.grad is not None:
            torch.testing.assert_close(_full(q.grad), _full(p.grad), **tolerance,
                                       msg=lambda m, name=name: f"{name}.grad {when}: {m}")
        torch.testing.assert_close(_full(q.detach()), _full(p.detach()), **tolerance,
                                   msg=lambda m, name=name: f"parameter {name} {when}: {m}")


def _batches(rank, steps, model_name: str):
    generator = torch.Generator().manual_seed(100 + rank)  # each rank its own data, as in data-parallel training
    if model_name.startswith("net"):
        return [torch.randn(4, 8, generator=generator) for _ in range(steps)]
    return [torch.randint(0, VOCAB, (2, 12), generator=generator) for _ in range(steps)]


# DDP options with which DDP's reducer, not the backward trace, reduces the gradients
_DDP_REDUCER_OPTIONS = {"find_unused_parameters", "static_graph"}


def _assert_compiled(jitted, wrapper: str, calls: int, options=()) -> None:
    """Thunder really traced the model's math, once per jitted function, and ran it on every call (a silent fallback
    to eager could not pass; with ``accumulate``, DDP's micro-steps without synchronization run a function that does
    not reduce, and the synchronizing ones one that reduces the accumulated gradients); under DDP, its backward
    trace all-reduced the gradients (in several buckets with small ones); under
    FSDP2, each unit's forward trace all-gathered its parameters and its backward trace reduce-scattered its
    gradients."""
    functions = jitted._run.functions
    assert functions, f"thunder compiled nothing of the {wrapper} model"
    for function in functions:
        stats = thunder.compile_stats(function)
        assert (stats.cache_misses, stats.cache_hits) == (1, stats.calls - 1), (stats.cache_misses, stats.cache_hits)
        assert "ltorch.linear(" in str(stats.last_traces[0])
    units = len(getattr(jitted._run, "units", (jitted._run,)))
    assert sum(thunder.compile_stats(f).calls for f in functions) == units * calls, functions
    if wrapper == "ddp" and "accumulate" in options:  # the synchronizing steps' trace reads the accumulated .grad
        assert "add_accumulated_grad(" in str(thunder.last_backward_traces(functions[0])[-1])
    if wrapper == "ddp" and not _DDP_REDUCER_OPTIONS & set(options):
        buckets = str(thunder.last_backward_traces(functions[0])[-1]).count("_c10d_functional.all_reduce_(")
        assert buckets > ("small_buckets" in options), f"{buckets} all-reduces in the backward trace"
    if wrapper == "fsdp" and "accumulate" not in options:
        # every compiled unit waited for its parameters' all-gather (issued by it or, prefetched, by the unit before)
        # in its forward trace, and reduce-scattered its gradients in its backward trace, where ZERO3's units (not
        # ZERO2's) all-gathered their parameters again (or took the all-gather the next block's backward handed over,
        # which each block after the first issues for the block before)
        zero3 = "zero2" not in options
        for k, function in enumerate(functions):
            forward = str(thunder.last_traces(function)[-1])
            assert forward.count("_c10d_functional.wait_tensor(") == 1, forward
            backward = str(thunder.last_backward_traces(function)[-1])
            assert backward.count("_c10d_functional.reduce_scatter_tensor(") == 1, backward
            if "blocks_only" not in options:  # ZERO3 blocks gather their parameters again for the backward
                regathers = backward.count("fsdp_backward_prefetch.prefetched_or_all_gather(")
                prefetches = backward.count("fsdp_backward_prefetch.all_gather_and_hand_over(")
                assert (regathers, prefetches) == (zero3, zero3 and k > 0), backward


# scenarios ----------------------------------------------------------------------------------------------------------

def train_like_eager(rank, model_name: str, wrapper: str, optimizer: str, options=(), *, device: str = "cpu"):
    """``STEPS`` optimizer steps of the eager-wrapped model and of the thunder-jitted copy; with ``accumulate``,
    each step is two micro-batches, the first without gradient synchronization (``no_sync`` /
    ``set_requires_gradient_sync(False)``)."""
    model, loss_fn = MODELS[model_name]()
    model = model.to(device)
    wrap = WRAPPERS[wrapper]
    mp_policy = bf16_params_fp32_reduce() if "mixed_precision" in options else None
    accumulate = "accumulate" in options
    eager = wrap(copy.deepcopy(model), options, mp_policy=mp_policy)
    compiled = wrap(copy.deepcopy(model), options, mp_policy=mp_policy)
    jitted = thunder.jit(compiled)
    eager_opt, jit_opt = OPTIMIZERS[optimizer](eager.parameters()), OPTIMIZERS[optimizer](compiled.parameters())
    tolerance = BFLOAT16 if mp_policy is not None else FLOAT32
    micro = 2 if accumulate else 1
    batches = [b.to(device) for b in _batches(rank, STEPS * micro, model_name)]
    for step in range(STEPS):
        for i in range(micro):
            batch = batches[step * micro + i]
            last = i == micro - 1
            losses = []
            for m, runner in ((eager, eager), (compiled, jitted)):
                with gradient_sync(m, wrapper, enabled=last):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", thunder.torch.opaque.OpaqueFallbackWarning)
                        loss = loss_fn(runner, batch)
                    loss.backward()
                losses.append(loss)
            torch.testing.assert_close(losses[1], losses[0], **tolerance,
                                       msg=lambda m, step=step: f"rank {rank} loss at step {step}: {m}")
        what = f"on rank {rank} at step {step} ({model_name}, {wrapper}, {optimizer})"
        assert_same_state(compiled, eager, f"before the optimizer step {what}", tolerance)
        eager_opt.step()
        jit_opt.step()
        eager_opt.zero_grad()
        jit_opt.zero_grad()
        assert_same_state(compiled, eager, f"after the optimizer step {what}", tolerance)
    _assert_compiled(jitted, wrapper, STEPS * micro, options)


class gradient_sync:
    """No gradient synchronization inside (DDP's ``no_sync()``, FSDP2's ``set_requires_gradient_sync``) unless
    ``enabled``."""

    def __init__(self, model, wrapper: str, enabled: bool):
        self.model, self.wrapper, self.enabled = model, wrapper, enabled

    def __enter__(self):
        if self.enabled:
            return
        if self.wrapper == "ddp":
            self._ctx = self.model.no_sync()
            self._ctx.__enter__()
        else:
            self.model.set_requires_gradient_sync(False)

    def __exit__(self, *exc):
        if self.enabled:
            return
        if self.wrapper == "ddp":
            self._ctx.__exit__(*exc)
        else:
            self.model.set_requires_gradient_sync(True)


def bf16_params_fp32_reduce():
    from torch.distributed.fsdp import MixedPrecisionPolicy

    return MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)


def scenarios(rank, world_size, cases, device="cpu"):
    """Each case: (model, wrapper, optimizer, options); options: "accumulate", "mixed_precision" (FSDP2: bf16
    parameters, fp32 reduction), "zero2" (FSDP2: no resharding after the forward), "blocks_only" (FSDP2 units
    below an unsharded root; the small model only), "find_unused_parameters", "static_graph" (DDP's) and
    "small_buckets" (DDP: 10 KB buckets)."""
    for model_name, wrapper, optimizer, options in cases:
        train_like_eager(rank, model_name, wrapper, optimizer, options, device=device)
    dist.barrier()
