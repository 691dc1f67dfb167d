"""DDP and FSDP2 models under thunder.jit on gloo process groups, against the same wrapper run eagerly.

Each test spawns its ranks (tests/distributed/launch.py: a deadline, the process group destroyed at the end); the
ranks run tests/distributed/training.py (train both copies, compare every step) and refusals.py. The small runs
are part of ``nox -s tests``; the real models (litgpt GPT, HF Llama) and the 4-process run are marked slow and run
in ``nox -s distributed``.
"""

from __future__ import annotations

import multiprocessing
import time

import pytest
import torch
import torch.distributed as dist
from torch.multiprocessing import ProcessRaisedException

from .collectives import collectives, inplace_collectives, waits_before_the_gathered_tensor_is_overwritten, waits_placed_late
from .communication import communicates_like_eager
from .ddp_buckets import (
    buckets_overlap_backward,
    parameter_hooks_see_each_ranks_gradient,
    reducer_fallbacks,
    shared_frozen_and_input_gradients,
)
from .fsdp_prefetch import (
    backward_prefetch,
    backward_prefetch_not_taken,
    block_called_twice,
    evaluation_between_steps,
    explicit_and_default_prefetch_mixed,
    explicit_backward_prefetch,
    forward_prefetch,
    hooks_registered_during_a_call,
    mixed_precision_per_unit,
)
from .fsdp_reduce_scatter import engine_reduces_where_the_trace_cannot, reduce_scatter_in_backward_trace
from .launch import run_distributed
from .refusals import refusals
from .training import scenarios

pytestmark = pytest.mark.skipif(not (dist.is_available() and dist.is_gloo_available()),
                                reason="this torch build has no torch.distributed with the gloo backend")

WRAPPERS = ("ddp", "fsdp")
OPTIMIZERS = ("sgd_momentum", "adamw")


def _small_model_collectives_and_refusals(rank, world_size):
    scenarios(rank, world_size, [("net", wrapper, "sgd_momentum", ()) for wrapper in WRAPPERS]
              + [("net", "ddp", "adamw", ("accumulate",)), ("net", "fsdp", "adamw", ("accumulate",)),
                 ("net", "fsdp", "sgd_momentum", ("mixed_precision",)), ("net", "fsdp", "sgd_momentum", ("zero2",)),
                 ("net_with_unused", "ddp", "sgd_momentum", ("find_unused_parameters",)),
                 ("net", "ddp", "adamw", ("static_graph",)), ("net", "fsdp", "sgd_momentum", ("blocks_only",))])
    refusals(rank, world_size)
    buckets_overlap_backward(rank, world_size)
    shared_frozen_and_input_gradients(rank, world_size)
    forward_prefetch(rank, world_size)
    hooks_registered_during_a_call(rank, world_size)
    backward_prefetch(rank, world_size)
    backward_prefetch_not_taken(rank, world_size)
    communicates_like_eager(rank, world_size)
    reduce_scatter_in_backward_trace(rank, world_size)
    engine_reduces_where_the_trace_cannot(rank, world_size)
    reducer_fallbacks(rank, world_size)
    parameter_hooks_see_each_ranks_gradient(rank, world_size)
    collectives(rank, world_size)
    inplace_collectives(rank, world_size)
    waits_placed_late(rank, world_size)
    waits_before_the_gathered_tensor_is_overwritten(rank, world_size)


def test_small_model_collectives_and_refusals():
    """A two-block MLP (each block its own FSDP unit) under DDP and FSDP2, gradient accumulation without sync,
    bf16 parameters with fp32 reduction, ZERO2, units below an unsharded root, DDP's find_unused_parameters and
    static_graph; engine work reached while tracing is refused; functional collectives in a jitted function are
    trace symbols with gradients, each wait just before its result is read; DDP's buckets are all-reduced in the
    backward trace, overlapping it; FSDP2 units all-gather their parameters in their forward traces (the next
    block's prefetched) and reduce-scatter their gradients in their backward traces, where ZERO3's block hands the
    all-gather of the block before over to its backward; each (micro-)step, accumulating or not, issues the
    collectives eager issues (more FSDP2 cases:
    test_fsdp_units_around_the_traces)."""
    run_distributed(_small_model_collectives_and_refusals, 2, timeout=240)


def _fsdp_units_around_the_traces(rank, world_size):
    scenarios(rank, world_size, [("net", "fsdp", "adamw", ("mixed_precision", "zero2"))])
    evaluation_between_steps(rank, world_size)
    mixed_precision_per_unit(rank, world_size)
    block_called_twice(rank, world_size)
    explicit_backward_prefetch(rank, world_size)
    explicit_and_default_prefetch_mixed(rank, world_size)
    communicates_like_eager(rank, world_size, ("fsdp_bf16",))


@pytest.mark.slow
def test_fsdp_units_around_the_traces():
    """FSDP2 units whose traces gather their parameters, in what goes around them: bf16 parameters with ZERO2, a
    forward without grad between steps, bf16 blocks in an fp32 root, a block called twice in one forward, backward
    prefetch targets set explicitly, and the collectives of bf16 parameters with fp32 reduction (all-gathers in
    bf16, reduce-scatters in fp32) against eager's."""
    run_distributed(_fsdp_units_around_the_traces, 2, timeout=300)


REAL_MODEL_CASES = (
    [(model, wrapper, optimizer, ()) for model in ("litgpt_gpt", "hf_llama") for wrapper in WRAPPERS
     for optimizer in OPTIMIZERS]
    + [("litgpt_gpt", wrapper, "adamw", ("accumulate",)) for wrapper in WRAPPERS]
    + [("hf_llama", "fsdp", "adamw", ("mixed_precision",))]
    + [(model, "ddp", "adamw", ("small_buckets",)) for model in ("litgpt_gpt", "hf_llama")]
)


@pytest.mark.slow
def test_real_models_train_like_eager():
    """litgpt's GPT and HF's Llama, 5 steps of SGD with momentum and of AdamW under DDP and FSDP2 (and gradient
    accumulation, bf16 parameters with fp32 reduction, DDP's gradients in many buckets): every rank's losses,
    gathered gradients and parameters equal the eager run's."""
    run_distributed(scenarios, 2, list(REAL_MODEL_CASES), timeout=900)


def _four_process_cases(rank, world_size):
    scenarios(rank, world_size, [("litgpt_gpt", "ddp", "sgd_momentum", ()), ("hf_llama", "fsdp", "adamw", ())])
    buckets_overlap_backward(rank, world_size)  # several buckets, issued in the same order by every rank
    reduce_scatter_in_backward_trace(rank, world_size)  # shards of 2, 2 and 1 row, and 1 row and none
    communicates_like_eager(rank, world_size)


@pytest.mark.slow
def test_four_processes():
    """litgpt's GPT under DDP and HF's Llama under FSDP2 on 4 processes, and DDP's buckets in the backward trace."""
    run_distributed(_four_process_cases, 4, timeout=600)


def _rank_hangs(rank, world_size):
    if rank == 1:
        time.sleep(600)  # rank 0 waits for it at the final barrier


def _rank_fails(rank, world_size):
    if rank == 1:  # rank 0 waits at the final barrier, which may fail first ("connection reset")
        raise ValueError("rank 1 failed on purpose")


def test_runs_end_by_their_deadline_and_report_a_failed_rank():
    """What every test here relies on (tests/distributed/launch.py): a run past its deadline is killed and fails, a
    rank's exception fails the run with its message (also where the other rank's failure is the one torch reports),
    and no rank process outlives the run either way."""
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="did not finish within 5 s"):
        run_distributed(_rank_hangs, 2, timeout=5)
    assert time.monotonic() - start < 60
    assert not multiprocessing.active_children()
    with pytest.raises(ProcessRaisedException, match="ValueError: rank 1 failed on purpose"):
        run_distributed(_rank_fails, 2, timeout=120)
    assert not multiprocessing.active_children()


@pytest.mark.skipif(not (torch.cuda.is_available() and dist.is_nccl_available()), reason="needs a CUDA GPU and NCCL")
def test_cuda_nccl_world_size_one():
    """The real-model cases on one GPU with NCCL (world size 1: the engine's code paths, no peer)."""
    run_distributed(scenarios, 1, list(REAL_MODEL_CASES), "cuda", timeout=900, backend="nccl")
