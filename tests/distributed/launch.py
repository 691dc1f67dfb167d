"""Runs a function on N processes of a process group (gloo on CPU; NCCL, one GPU per rank), with a deadline, and cleans up.

Each rank calls ``fn(rank, world_size, *args)`` between ``init_process_group`` and ``destroy_process_group``;
the group meets through a file, so concurrent runs never compete for a port. A rank that raises fails the run
with its traceback, and with those of the other ranks that failed too (the rank torch reports first may be one whose
final barrier failed because its peer had gone); a run past ``timeout`` is killed and fails.
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
import time

import torch.multiprocessing as mp


def _rank_main(rank, world_size, init_file, backend, fn, args):
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)  # the ranks share the machine's cores
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"file://{init_file}", rank=rank, world_size=world_size)
    try:
        fn(rank, world_size, *args)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    # every check passed and the group is gone: leave without the interpreter's teardown, where gloo's worker
    # threads holding tensors were seen to abort a rank now and then ("terminate called without an active
    # exception", SIGABRT after the results; about 1 run in 30-60 on the 2-core machine, cf. pytorch/pytorch#179291)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


_GRACE_S = 5.0  # after a rank failed, how long the others get to end (and write their errors) before they are killed


def _other_errors(context, reported: int) -> str:
    """The tracebacks of the ranks that failed besides the one torch reported."""
    errors = ""
    for index, path in enumerate(context.error_files):
        if index != reported and os.access(path, os.R_OK):
            with open(path, "rb") as f:
                errors += f"\n\n-- Process {index:d} also failed:\n{pickle.load(f)}"
    return errors


def run_distributed(fn, world_size: int, *args, timeout: float = 300.0, backend: str = "gloo") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "rendezvous")
        context = mp.start_processes(_rank_main, args=(world_size, init_file, backend, fn, args), nprocs=world_size,
                                     join=False, start_method="spawn")
        deadline = time.monotonic() + timeout
        try:
            while not context.join(timeout=max(0.0, deadline - time.monotonic()), grace_period=_GRACE_S):
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"the {world_size}-process run did not finish within {timeout:.0f} s")
        except mp.ProcessRaisedException as e:
            raise mp.ProcessRaisedException(e.msg + _other_errors(context, e.error_index), e.error_index,
                                            e.error_pid) from None
        finally:
            for process in context.processes:
                if process.is_alive():
                    process.kill()
                    process.join()
