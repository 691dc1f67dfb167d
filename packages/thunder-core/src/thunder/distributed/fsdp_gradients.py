"""FSDP2's gradient reduce-scatter of a compiled unit as collectives in its backward trace (the forward's
all-gather: :mod:`thunder.distributed.fsdp_gather`).

For a ``fully_shard`` unit whose traces do FSDP2's work (see :mod:`thunder.distributed.boundaries`), the backward
gets the unit's unsharded gradients from :func:`~thunder.distributed.fsdp_gather.unsharded_grad` and reduces them as
FSDP2's ``foreach_reduce`` does for one unit:

- right after the unit's last parameter gradient is computed: each gradient cast to the reduce dtype
  (``MixedPrecisionPolicy.reduce_dtype``), padded on dim 0 to a multiple of the world size, cut into one chunk per
  rank, the chunks of every gradient laid out rank by rank in one buffer, and ``reduce_scatter(sum)`` issued
  without waiting, while the rest of the backward (the input's gradient) runs;
- at the end of the backward: waited for, divided by the gradient divide factor (the world size unless set),
  cast back to the parameters' dtype and cut into each parameter's shard, which
  :func:`accumulate_sharded_grad` (a ``side_effect`` symbol) writes into the sharded parameter's ``.grad`` as
  FSDP2 does: a new DTensor gradient, or added to the one there (gradient accumulation), then the parameter's
  post-accumulate-grad hooks.

With ``reshard_after_forward`` (ZERO3) the forward does not save the gathered parameters: the backward all-gathers
them again from the shards first. FSDP2's hooks do the unit's work instead where the traces would not do what
they do: a configuration they do not write (:func:`unsupported_configuration`: HSDP, CPU offload, a custom
all-gather or reduce-scatter, an all-reduce hook, a divide rule other than a plain division, a dim other than 0,
...), and a unit whose trace cannot hold every gradient (:class:`NeedsFSDPEngine`).
"""

from __future__ import annotations

import torch

from thunder.core.errors import UnsupportedError
from thunder.core.proxies import TensorProxy, pyval
from thunder.core.shapes import as_ints, numel
from thunder.core.trace import TraceProvenance, from_trace, tracectx
from thunder.distributed import gradient_buckets as buckets
from thunder.distributed.engine_state import group_name, keyed_object, param_group
from thunder.distributed.fsdp_backward_prefetch import prefetch
from thunder.torch.registry import torchsymbol
from thunder.transforms.transform import Transform

__all__ = ["FSDPReduceScatter", "NeedsFSDPEngine", "accumulate_sharded_grad", "unsupported_configuration"]

_REDUCE_DTYPES = (torch.float32, torch.bfloat16)  # FSDP2 divides other dtypes before and after the reduction
_GATHERED_OP = "fsdp_gather.use_gathered"  # unsharded_param as the torch executor runs it


class NeedsFSDPEngine(UnsupportedError):
    """The backward trace cannot reduce-scatter this unit's gradients as FSDP2 would: FSDP2's engine must."""


def unsupported_configuration(unit) -> str | None:
    """Why the backward trace cannot reduce this unit's gradients as FSDP2 would, or None if it can. Reads FSDP2's
    parameter group (torch 2.13's attributes); a torch whose FSDP2 lacks one is a reason too."""
    try:
        return _unsupported_configuration(unit)
    except (AttributeError, ImportError) as e:
        return f"thunder does not know this torch version's FSDP2 internals ({e})"


def _unsupported_configuration(unit) -> str | None:
    group = param_group(unit)
    if group is None:
        return "it has no parameters or several parameter groups"
    from torch.distributed.fsdp._fully_shard._fsdp_collectives import DefaultAllGather, DefaultReduceScatter
    from torch.distributed.fsdp._fully_shard._fsdp_common import FSDPMeshInfo, HSDPMeshInfo

    reasons = {
        "HSDP or replication (an all-reduce after the reduce-scatter)":
            not isinstance(group.mesh_info, FSDPMeshInfo) or isinstance(group.mesh_info, HSDPMeshInfo),
        "a reduce-scatter implementation other than the default": type(group._reduce_scatter_comm)
            is not DefaultReduceScatter,
        "an all-gather implementation other than the default": type(group._all_gather_comm) is not DefaultAllGather,
        "resharding after the forward to a smaller mesh (reshard_after_forward=int)": group._use_post_forward_mesh,
        "parameters with all-gather extensions (fsdp_pre_all_gather)":
            any(hasattr(p._sharded_local_tensor, "fsdp_pre_all_gather") for p in group.fsdp_params),
        "an all-reduce hook": group._all_reduce_hook is not None,
        "force_sum_reduction_for_comms": group.force_sum_reduction_for_comms,
        "reduce_scatter_unused_params": group.reduce_scatter_unused_params,
        f"a reduce dtype other than {_REDUCE_DTYPES}": (group._reduce_dtype or group._orig_dtype) not in _REDUCE_DTYPES,
        "CPU offload": any(p.offload_to_cpu for p in group.fsdp_params),
        "a parameter sharded on a dim other than 0": any(p.fsdp_placement.dim != 0 for p in group.fsdp_params),
    }
    for p in group.fsdp_params:  # what the traces read of each parameter (AttributeError: torch's FSDP2 changed)
        (p.sharded_size, p.sharded_param, p.to_sharded_dtensor, p._param_fqn, p._sharded_param_data,  # noqa: B018
         p.padded_sharded_param_size, p._orig_size, p.param_dtype)
    group.is_sharded, group._all_gather_result, group._all_gather_process_group  # noqa: B018
    found = [what for what, present in reasons.items() if present]
    return ", ".join(found) or None


@torchsymbol(tags=("side_effect",))
def accumulate_sharded_grad(shard, key: str):
    return None


def write_sharded_grad(shard: torch.Tensor, key: str) -> None:
    """FSDP2's write of a reduced shard: the sharded parameter's new DTensor ``.grad``, or added to the one there;
    then its post-accumulate-grad hooks."""
    fsdp_param = keyed_object(key)
    param = fsdp_param.sharded_param
    with torch.no_grad():
        if param.grad is None:
            param.grad = fsdp_param.to_sharded_dtensor(shard)
        else:
            param.grad.to_local().add_(shard)
    buckets.run_post_accumulate_grad_hooks(param)


IMPLEMENTATIONS = {accumulate_sharded_grad: "thunder.distributed.fsdp_gradients.write_sharded_grad"}


class FSDPReduceScatter(Transform):
    """Writes FSDP2's reduce-scatter of ``unit``'s gradients into the backward trace of its compiled forward."""

    segments_error = NeedsFSDPEngine
    remedy_on_segments = "FSDP2 reduce-scatters the gradients of such a program, outside the trace"

    def __init__(self, unit, backward_prefetch=lambda: None):
        self.unit = unit
        self.backward_prefetch = backward_prefetch  # () -> the parameter group whose all-gather the backward issues
        self.regathered: dict = {}  # name -> key of the gathered parameters the forward did not save (ZERO3)

    def transform_trace_post_optimization(self, computation_trace, **kwargs):
        """ZERO3 (``reshard_after_forward``): the forward does not save its gathered parameters for the backward,
        which gathers them again (:meth:`transform_backward_pre_lowering`), as FSDP2 reshards after the forward and
        all-gathers before the backward. Only where every parameter gets a gradient (the backward has every shard)."""
        group = param_group(self.unit)
        out = computation_trace.output
        gathered = {b.output.name: b for b in computation_trace.bound_symbols if b.sym.id.endswith(_GATHERED_OP)}
        forward = computation_trace.fn_name != "backward" and isinstance(out, tuple) and len(out) == 3
        if not (forward and gathered and group._reshard_after_forward
                and all(p.sharded_param.requires_grad for p in group.fsdp_params)):
            return computation_trace  # the backward, or ZERO2: the forward saves the gathered parameters
        flat, saved, other = out
        regathered = {p.name: gathered[p.name] for p in saved if isinstance(p, TensorProxy) and p.name in gathered}
        self.regathered = {name: b.args[2] for name, b in regathered.items()}
        new = from_trace(computation_trace)
        new.bound_symbols = list(computation_trace.bound_symbols)
        # in its place, the parameter's shard (an input, saved already): the backward's argument stays
        new.output = (flat, tuple(regathered[p.name].args[1] if isinstance(p, TensorProxy) and p.name in regathered
                                  else p for p in saved), other)
        new.provenance = TraceProvenance("FSDP2's reshard after forward: the gathered parameters are not saved")
        return new

    def transform_backward_pre_lowering(self, backward, *, inputs, differentiable_inputs, **kwargs):
        import time

        from thunder.distributed.fsdp_gather import sharded_param_key

        start = time.perf_counter_ns()
        group = param_group(self.unit)
        trainable = [p for p in group.fsdp_params if p.sharded_param.requires_grad]
        keys = [sharded_param_key(p) for p in trainable]
        marked = _marked_gradients(backward)
        missing = [p._param_fqn for p, key in zip(trainable, keys) if key not in marked]
        if missing:
            raise NeedsFSDPEngine(f"the parameters {', '.join(missing)} of the fully_shard unit get no gradient "
                                  "from thunder's backward (the forward does not use them)")

        grads = [marked[key][1] for key in keys]
        ready = buckets.ready_positions(backward)
        issue_after = max(ready.get(g.name, -1) for g in grads)
        markers = {id(marked[key][0]) for key in keys}
        process_group = group._reduce_scatter_process_group
        world_size, name = process_group.size(), group_name(process_group)
        new = from_trace(backward)
        with tracectx(new):
            _regather(new, group, marked, self.regathered)
            target = self.backward_prefetch()
            if target is not None:
                prefetch(target)
            for j, bsym in [(-1, None), *enumerate(backward.bound_symbols)]:
                if bsym is not None and id(bsym) not in markers:
                    new.bound_symbols.append(bsym)
                if j == issue_after:
                    pending = _issue(grads, group, world_size, name)
            _write(pending, trainable, grads, group, world_size)
        # the shards' gradients are the ones written above: autograd gets none
        handed = {b.output.name for b, _ in marked.values()}
        new.output = tuple(None if isinstance(g, TensorProxy) and g.name in handed else g for g in backward.output)
        seconds = (time.perf_counter_ns() - start) / 1e9
        new.provenance = TraceProvenance("FSDP2 reduce-scatter of the unit's gradients overlapping the backward",
                                         seconds)
        return new


def _regather(new, group, marked: dict, regathered: dict) -> None:
    """Records the all-gather of the unit's parameters from their shards at the start of the backward (or the wait
    for the one the unit's backward before handed over, :mod:`~thunder.distributed.fsdp_backward_prefetch`), for
    the gathered parameters the forward did not save: each defined under its argument's name, the argument (the
    shard, see transform_trace_post_optimization) renamed."""
    from thunder.distributed.fsdp_backward_prefetch import all_gather_unless_prefetched, unit_key
    from thunder.distributed.fsdp_gather import all_gather_input, gathered, sharded_param_key, unsharded_param

    if not regathered:
        return
    keys = [sharded_param_key(p) for p in group.fsdp_params]
    shards = {key: marked[key][0].args[1] for key in keys}
    process_group = group._all_gather_process_group
    pending = all_gather_unless_prefetched(all_gather_input(group, list(shards.values())), process_group.size(),
                                           group_name(process_group), unit_key(group))
    params = dict(zip(keys, gathered(group, pending)))
    new.args = list(new.args)
    for k, arg in enumerate(new.args):
        key = regathered.get(getattr(arg, "name", None))
        if key is not None:
            new.args[k] = arg.replace(name=new.make_unique_name(f"{arg.name}_not_saved"))
            new.bound_symbols.append(unsharded_param.bind(params[key], shards[key], key, output=arg))


def _marked_gradients(backward) -> dict:
    """key -> (the unsharded_grad bound symbol, the unsharded gradient it hands to the shard), for each parameter
    whose shard gets a gradient in the backward's outputs."""
    from thunder.distributed.fsdp_gather import unsharded_grad

    outputs = {o.name for o in backward.output if isinstance(o, TensorProxy)}
    return {b.args[2]: (b, b.args[0]) for b in backward.bound_symbols
            if b.sym.id == unsharded_grad.id and b.output.name in outputs}


def _padded_rows(grad: TensorProxy, world_size: int) -> int:
    rows = pyval(grad.shape[0])
    return -(-rows // world_size) * world_size


def _issue(grads: list, group, world_size: int, group_name: str) -> TensorProxy:
    """Records FSDP2's reduce-scatter input (every gradient's rank-r chunk in rank r's slice) and the pending
    reduce-scatter (sum) of it."""
    import thunder.torch as ltorch
    from thunder.distributed.collectives import reduce_scatter

    reduce_dtype = group._reduce_dtype or grads[0].dtype
    rows = []
    for grad in grads:
        g = ltorch.to(grad, dtype=reduce_dtype) if grad.dtype != reduce_dtype else grad
        g = ltorch.reshape(g, (pyval(g.shape[0]), -1)) if g.ndim != 2 else g
        padding = _padded_rows(grad, world_size) - pyval(grad.shape[0])
        if padding:
            g = ltorch.pad(g, (0, 0, 0, padding))
        rows.append(ltorch.reshape(g, (world_size, -1)))
    buffer = rows[0] if len(rows) == 1 else ltorch.cat(rows, 1)
    return reduce_scatter(ltorch.reshape(buffer, (-1,)), "sum", world_size, group_name)


def _write(pending: TensorProxy, fsdp_params: list, grads: list, group, world_size: int) -> None:
    """Records the wait, the division, the cast back and each shard's write into its sharded parameter's .grad."""
    import thunder.torch as ltorch
    from thunder.distributed.collectives import wait
    from thunder.distributed.fsdp_gather import sharded_param_key

    reduced = ltorch.div(wait(pending), float(group.gradient_divide_factor or world_size))
    orig_dtype = group._orig_dtype
    if orig_dtype is not None and reduced.dtype != orig_dtype:
        reduced = ltorch.to(reduced, dtype=orig_dtype)
    offset = 0
    for fsdp_param, grad in zip(fsdp_params, grads):
        sharded_size = tuple(fsdp_param.sharded_size)
        shard = ltorch.reshape(ltorch.narrow(reduced, 0, offset, numel(sharded_size)), sharded_size)
        accumulate_sharded_grad(shard, sharded_param_key(fsdp_param))
        offset += _padded_rows(grad, world_size) // world_size * numel(as_ints(grad.shape[1:]))
