"""``thunder.jit`` of a model trained on PyTorch's distributed engine: the engine runs natively on every call,
thunder compiles the math inside it.

DDP and FSDP2 do Python work on every forward that must not be traced once and replayed (seed 002, see
:mod:`thunder.distributed.outside_effects`): DDP prepares its reducer for the forward and the backward and
rebuilds its gradient buckets; FSDP2's hooks all-gather a unit's parameters before its forward, reshard them
after it, and register the hooks that all-gather again before its backward and reduce-scatter the gradients
after it. So the jit draws its boundary where the engine hands over to the model's own code:

- ``DistributedDataParallel(m)``: DDP's forward runs natively and calls the jitted ``m``, whose backward trace
  all-reduces the gradients bucket by bucket as DDP would, each bucket while the rest of the backward runs
  (:mod:`thunder.distributed.gradient_buckets`); DDP's reducer is told to expect no backward, as under
  ``no_sync()``; in the step after ``no_sync()`` steps it reduces the gradients accumulated in ``.grad`` with the
  new ones. Where the reducer must do the work (``find_unused_parameters``, ``static_graph``, a
  communication hook), the parameters, leaves of thunder's autograd node,
  reach its hooks as in eager, and it reduces when the node's backward has ended.
- a model with ``fully_shard`` units: each unit that contains no other unit (a transformer block, or the whole
  model when only the root is sharded) runs its forward jitted; what a unit with sub-units computes around them
  (the root's embedding and head) runs eagerly, between FSDP2's hooks. Where it can do what FSDP2 would, the
  jitted forward all-gathers the unit's parameters from their shards in its trace and issues the next unit's
  all-gather (:mod:`thunder.distributed.fsdp_gather`), and its backward reduce-scatters the unit's gradients
  (:mod:`thunder.distributed.fsdp_gradients`), FSDP2's forward hooks of the unit stepping aside for the call; else
  FSDP2's hooks run around the jitted forward, which reads the unsharded parameters they installed. Either way
  nothing is computed on shards.

A boundary swaps the compiled forwards in only for the duration of a call of the jitted module, so the model
itself, called directly, stays eager.
"""

from __future__ import annotations

import sys
import types
import warnings
import weakref

import torch

from thunder.distributed.engine_state import param_group

__all__ = ["engine_boundary", "DDPBoundary", "FSDPBoundary"]


def engine_boundary(model, jit_options: dict):
    """The boundary for ``model`` if the distributed engine drives it, else None."""
    if "torch.distributed" not in sys.modules:  # no engine exists before torch.distributed is imported
        return None
    from torch.distributed.fsdp import FSDPModule
    from torch.nn.parallel import DistributedDataParallel

    if isinstance(model, DistributedDataParallel):
        return DDPBoundary(model, jit_options)
    if any(isinstance(m, FSDPModule) for m in model.modules()):
        return FSDPBoundary(model, jit_options)
    return None


class DDPBoundary:
    """DDP's forward natively around the jitted wrapped module, whose backward all-reduces the gradients in its
    trace (:mod:`thunder.distributed.gradient_buckets`), with DDP's reducer switched off for that call; in the
    synchronizing step after ``no_sync()`` steps a second jitted function's backward reduces the gradients
    accumulated in ``.grad`` with the new ones. DDP's reducer reduces instead where the trace cannot do what it
    would (:func:`_needs_reducer`, and parameters with gradient hooks)."""

    def __init__(self, ddp, jit_options: dict):
        from thunder.distributed.gradient_buckets import DDPGradientBuckets

        if getattr(ddp, "_use_python_reducer", False):
            raise NotImplementedError("thunder.jit of DistributedDataParallel with the Python reducer "
                                      "(torch._dynamo.config.optimize_ddp = 'python_reducer' when DDP was made) is not "
                                      "supported; make the model with the default C++ reducer")
        self.ddp, self.jit_options = ddp, jit_options
        self.reducing = None if _needs_reducer(ddp) else _jitted(ddp.module, jit_options, DDPGradientBuckets(ddp))
        self.accumulating = None  # reduces .grad plus the new gradients: made on first need
        self.plain = _jitted(ddp.module, jit_options) if self.reducing is None else None  # made on first need
        self.unsynced = False  # .grad holds gradients accumulated under no_sync(), not reduced yet
        self.hooks_seen = (None, False)  # (PyTorch's hook-handle counter, whether a parameter had hooks then)

    @property
    def functions(self) -> list:
        """The jitted functions that ran (those reducing in their traces first), or the first made if none did."""
        made = [m._tfn for m in (self.reducing, self.accumulating, self.plain) if m is not None]
        return [f for f in made if f.stats.calls] or made[:1]

    def __call__(self, *args, **kwargs):
        from thunder.distributed.gradient_buckets import DDPGradientBuckets, NeedsDDPReducer

        ddp = self.ddp
        sync, training = ddp.require_backward_grad_sync, torch.is_grad_enabled()
        in_trace = self.reducing is not None and sync and not _needs_reducer(ddp) and not self._parameters_hooked()
        accumulated = training and self.unsynced
        if training:
            self.unsynced = not sync
        if in_trace:
            if accumulated and self.accumulating is None:
                self.accumulating = _jitted(ddp.module, self.jit_options,
                                            DDPGradientBuckets(ddp, accumulated=True))
            try:
                return self._call(self.accumulating if accumulated else self.reducing, args, kwargs, reducer=False)
            except NeedsDDPReducer as e:
                # raised while compiling, the same on every rank, before the program ran: from now on DDP's
                # reducer reduces, as in eager (it also raises eager's error for a parameter left unused)
                warnings.warn(f"thunder: DDP's reducer all-reduces this model's gradients when the backward has "
                              f"ended, not overlapping it, because {e}", stacklevel=2)
                self.reducing = self.accumulating = None
        if self.plain is None:
            self.plain = _jitted(ddp.module, self.jit_options)
        return self._call(self.plain, args, kwargs, reducer=True)

    def _call(self, module, args, kwargs, *, reducer: bool):
        # DDP's forward calls ``self.module``: an instance attribute wins over ``_modules['module']`` (which
        # state_dict and parameters() keep using) for this call only
        ddp = self.ddp
        state = ddp.__dict__
        state["module"] = module
        sync = ddp.require_backward_grad_sync
        if not reducer:  # DDP's forward as under no_sync(): the reducer expects no backward
            ddp.require_backward_grad_sync = False
        try:
            return ddp(*args, **kwargs)
        finally:
            del state["module"]
            if not reducer:
                ddp.require_backward_grad_sync = sync
                # what DDP's forward sets when it prepares the reducer: buffers are synchronized next forward
                ddp.require_forward_param_sync = torch.is_grad_enabled()


    def _parameters_hooked(self) -> bool:
        """Whether a parameter has gradient hooks (``register_hook``, ``register_post_accumulate_grad_hook``): in
        eager they see each rank's own gradient, before DDP's reducer reduces it, which thunder's buckets would
        reduce before them (or, in the synchronizing step after ``no_sync()``, write past them); so DDP's reducer
        reduces. Looked at again only when a hook was registered anywhere since (PyTorch's hook-handle counter)."""
        from torch.utils.hooks import RemovableHandle

        counter, hooked = self.hooks_seen
        if counter != RemovableHandle.next_id:
            hooked = any(p._backward_hooks or getattr(p, "_post_accumulate_grad_hooks", None)
                         for p in self.ddp.module.parameters())
            self.hooks_seen = (RemovableHandle.next_id, hooked)
        return hooked


def _needs_reducer(ddp) -> bool:
    """Whether DDP's reducer must reduce: what the trace's buckets do not do (unused parameters, static graph's
    delayed reduction, a communication hook, DDP's mixed precision, uneven inputs under Join)."""
    return bool(ddp.find_unused_parameters or ddp.static_graph or ddp._comm_hooks or ddp.mixed_precision is not None
                or ddp._join_config.enable or getattr(ddp, "_delay_all_reduce_all_params", False))


def _jitted(module, jit_options: dict, *transforms):
    from thunder.frontend.module import ThunderModule

    options = dict(jit_options)
    options["transforms"] = (*(options.get("transforms") or ()), *transforms)
    return ThunderModule(module, **options)


class FSDPBoundary:
    """The model called natively, each innermost FSDP unit's forward jitted (:class:`_FSDPUnit`): its parameters
    all-gathered in its forward trace, the next unit's all-gather prefetched there, its gradients reduce-scattered in
    its backward trace; FSDP2's own hooks do that work for a unit where the traces cannot."""

    def __init__(self, model, jit_options: dict):
        from torch.distributed.fsdp import FSDPModule

        units = [(name, m) for name, m in model.named_modules() if isinstance(m, FSDPModule)]
        innermost = [(name, u) for name, u in units
                     if not any(isinstance(d, FSDPModule) for d in u.modules() if d is not u)]
        self.model = model
        self.units = [_FSDPUnit(u, name or "the model", jit_options, self) for name, u in innermost]
        self._unit_of = {id(unit.module): unit for unit in self.units}
        self.calling = _Switch()  # on while this boundary calls the model: FSDP2's forward hooks of the units step aside
        for unit in self.units:
            if unit.runs_hooks:
                _gate_fsdp_forward_hooks(unit, self.calling)
        self.pending: dict = {}  # unit -> its parameters' all-gather, issued by the unit before it (prefetch)
        self.forward_order: list = []  # the units whose traces gathered their parameters in this call, in order

    @property
    def functions(self) -> list:
        """The jitted functions that ran, unit by unit (the one gathering and reducing in its traces first)."""
        return [f for unit in self.units for f in unit.functions]

    def prefetch_target(self, unit):
        """The unit whose all-gather ``unit``'s trace issues: the first of FSDP2's forward prefetch targets
        (``set_modules_to_forward_prefetch``) if its trace will gather its parameters and none is pending for it
        yet (``unit`` called again before it), else None."""
        states = unit.module._get_fsdp_state()._states_to_forward_prefetch
        target = self._unit_of.get(id(states[0]._modules[0])) if states else None
        ready = target is not None and target not in self.pending and target.can_gather()
        return target if ready else None

    def backward_prefetch_target(self, unit):
        """The parameter group whose all-gather ``unit``'s backward trace issues for the backward that runs next
        (:mod:`thunder.distributed.fsdp_backward_prefetch`), as FSDP2's backward prefetch: the first of its
        ``set_modules_to_backward_prefetch`` targets, else the unit whose forward ran just before ``unit``'s in
        this call. Only a unit whose backward trace gathers its parameters again (ZERO3), not ``unit`` itself."""
        explicit = unit.module._get_fsdp_state()._states_to_backward_prefetch
        if explicit:
            target = self._unit_of.get(id(explicit[0]._modules[0]))
        else:
            before = self.forward_order[:len(self.forward_order) - 1 - self.forward_order[::-1].index(unit)]
            target = before[-1] if before else None
        if target is None or target is unit or not target.regathers():
            return None
        return param_group(target.module)

    def discard_pending(self, unit) -> None:
        """Waits for an all-gather prefetched for ``unit`` whose trace will not use it."""
        pending = self.pending.pop(unit, None)
        if pending is not None:
            torch.ops._c10d_functional.wait_tensor(pending)

    def __call__(self, *args, **kwargs):
        # nn.Module.__call__ runs ``self.forward``, which an instance attribute overrides; FSDP2's forward hooks
        # of the units step aside for the call: a unit runs them itself where its trace does not gather
        self.forward_order = []
        for unit in self.units:
            unit.module.__dict__["forward"] = unit
            unit.paths.clear()
        self.calling.on = True
        try:
            output = self.model(*args, **kwargs)
        finally:
            self.calling.on = False
            for unit in self.units:
                unit.module.__dict__.pop("forward", None)
                self.discard_pending(unit)
        self._root_backward_prefetch(output)
        return output

    def _root_backward_prefetch(self, output) -> None:
        """FSDP2's root unit (running natively, around compiled units) all-gathers, when its backward starts, the
        parameters of the unit whose forward ran last before its own; its hooks do not see the compiled units, so
        the boundary hooks the output as FSDP2 does and hands that unit's all-gather over to its backward
        (:meth:`_FSDPUnit.prefetch_for_backward`). The root's ``set_modules_to_backward_prefetch`` targets replace
        that one, as in FSDP2: FSDP2 prefetches them, which a compiled unit's trace takes (:class:`_RoutedUnshard`)."""
        from torch.distributed.fsdp import FSDPModule
        from torch.utils._pytree import tree_leaves

        last = self.forward_order[-1] if self.forward_order else None
        if (last is None or last.module is self.model or not isinstance(self.model, FSDPModule) or not last.regathers()
                or self.model._get_fsdp_state()._states_to_backward_prefetch):
            return
        tensors = [t for t in tree_leaves(output) if isinstance(t, torch.Tensor) and t.requires_grad]
        if tensors:
            torch.autograd.graph.register_multi_grad_hook(tensors, lambda grads: last.prefetch_for_backward(),
                                                          mode="any")


class _Switch:
    on = False


class _SteppingAside:
    """Stands in for one of FSDP2's forward hooks in a unit's hook dict (under the hook's key, so its handle still
    removes it): calls the hook, except while ``calling`` is on. Set once, not per call, so that the module's other
    hooks, also those added or removed during a call, stay as they are. Where it calls the hook (the model called
    directly), ``paths`` (the unit's) records that FSDP2's hooks ran the unit."""

    def __init__(self, hook, calling: _Switch, paths: set):
        self.hook, self.calling, self.paths = hook, calling, paths

    def __call__(self, *args, **kwargs):
        if self.calling.on:
            return None  # the hook changes nothing
        self.paths.add("hooks")
        return self.hook(*args, **kwargs)


class _RoutedUnshard:
    """Stands in for FSDP2's ``unshard`` of a compiled unit's parameter group (an instance attribute, set once), which
    FSDP2 calls to all-gather the unit's parameters: its hooks' own, another unit's prefetch (FSDP2's
    ``set_modules_to_forward_prefetch`` / ``set_modules_to_backward_prefetch`` of a unit that runs natively, the
    root's backward prefetch) or the user's. Where the unit's traces gather the parameters, the unit does it
    (:meth:`_FSDPUnit.takes_unshard`), so that they are gathered once, as in eager; else FSDP2's ``unshard``. The
    model does not keep the jitted model alive (a weak reference to the unit)."""

    def __init__(self, unshard, unit):
        self.unshard, self.unit = unshard, weakref.ref(unit)

    def __call__(self, *args, **kwargs):
        unit = self.unit()
        if unit is None or not unit.takes_unshard():
            return self.unshard(*args, **kwargs)


def _gate_fsdp_forward_hooks(unit, calling: _Switch) -> None:
    module = unit.module
    state = module._get_fsdp_state()
    for hooks, handle in ((module._forward_pre_hooks, state._pre_forward_hook_handle),
                          (module._forward_hooks, state._post_forward_hook_handle)):
        hooks[handle.id] = _SteppingAside(hooks[handle.id], calling, unit.paths)


class _FSDPUnit:
    """An innermost ``fully_shard`` unit's forward, jitted. Where it can, the trace does FSDP2's work for the unit
    (:func:`thunder.distributed.fsdp_gather.forward_gathering`: the parameters' all-gather and the next unit's,
    and the gradients' reduce-scatter in the backward, :mod:`thunder.distributed.fsdp_gradients`), and FSDP2's
    hooks do not run. Elsewhere FSDP2's hooks run around the plain jitted forward: a configuration the traces do not
    write or a program they cannot hold (warned once), a forward without grad, a step without gradient
    synchronization and the synchronizing step after it (FSDP2 accumulates the unsharded gradient and reduces it
    with the next one, which the trace does not see), and parameters FSDP2 has already gathered (a prefetch of its
    own, ``reshard_after_forward=False`` after a forward without grad)."""

    def __init__(self, module, name: str, jit_options: dict, boundary):
        self.module, self.name, self.jit_options, self.boundary = module, name, jit_options, boundary
        # a unit of several modules (fully_shard([a, b])) keeps FSDP2's hooks, which span its modules
        self.runs_hooks = len(module._get_fsdp_state()._modules) == 1
        self.gathering = self.plain = None
        self.reduce_scatter = None  # the gathering function's FSDPReduceScatter
        self.prefetcher = None  # the all-gather of the parameters issued outside the unit's traces (prefetches)
        self.refused = None  # why FSDP2 does the unit's work: known at the first call (FSDP2 sets dtypes lazily)
        self.checked = self.warned = False
        self.unsynced = False  # FSDP2 holds gradients accumulated without synchronization, not reduced yet
        # how the unit ran since the jitted model's last call began: "trace", "hooks" (FSDP2's, also called directly)
        self.paths: set = set()
        group = param_group(module)
        if self.runs_hooks and group is not None:
            group.unshard = _RoutedUnshard(group.unshard, self)
        if self.runs_hooks:
            self._function(gathering=True)  # thunder.last_traces(jmodel) names one before any call
        else:
            self.refused = "it is a unit of several modules (fully_shard([...]))"

    @property
    def functions(self) -> list:
        made = [f for f in (self.gathering, self.plain) if f is not None]
        return [f for f in made if f.stats.calls] or made[:1]

    def can_gather(self) -> bool:
        """Whether this call's trace can do FSDP2's work for the unit (read before the call, changes nothing)."""
        from thunder.distributed.fsdp_gradients import unsupported_configuration

        if not self.checked:
            self.checked, self.refused = True, unsupported_configuration(self.module)
        if self.refused is not None or not torch.is_grad_enabled() or self.unsynced:
            return False
        group = param_group(self.module)
        return group.reduce_grads and group.is_sharded and group._all_gather_result is None

    def takes_unshard(self) -> bool:
        """FSDP2 is about to all-gather this unit's parameters. Where thunder's traces gather them, the unit does it
        instead and returns True: in a forward of the jitted model whose trace for this unit will gather (FSDP2's
        hooks have not run for it), the all-gather issued now and handed to that trace; in the backward of a forward
        whose traces alone ran the unit, ZERO3's all-gather handed over to its backward trace (ZERO2's forward kept
        the gathered parameters for it: nothing to gather)."""
        from torch.distributed.fsdp._fully_shard._fsdp_common import TrainingState

        state = param_group(self.module)._training_state
        if state == TrainingState.FORWARD and self.boundary.calling.on and "hooks" not in self.paths:
            if not self.can_gather():
                return False
            if self not in self.boundary.pending:
                self.boundary.pending[self] = self._all_gather_now()
            return True
        if state == TrainingState.PRE_BACKWARD and self.paths == {"trace"}:
            if self.regathers():
                self.prefetch_for_backward()
            return True
        return False

    def prefetch_for_backward(self) -> None:
        """Issues the all-gather of this unit's parameters from their current shards and hands it over to its
        backward, unless one is handed over already."""
        from thunder.distributed.fsdp_backward_prefetch import hand_over_pending, handed_over, unit_key

        key = unit_key(param_group(self.module))
        if not handed_over(key):
            hand_over_pending(self._all_gather_now(), key)

    def _all_gather_now(self):
        """The pending all-gather of this unit's parameters from their current shards (a compiled function of its
        own, :func:`~thunder.distributed.fsdp_backward_prefetch.issue_all_gather`)."""
        from thunder.distributed.fsdp_backward_prefetch import issue_all_gather
        from thunder.frontend.jit import ThunderFunction

        if self.prefetcher is None:
            self.prefetcher = ThunderFunction(types.MethodType(issue_all_gather, self.module), **self.jit_options)
        return self.prefetcher(tuple(p._sharded_param_data for p in param_group(self.module).fsdp_params))

    def regathers(self) -> bool:
        """Whether this unit's backward trace gathers its parameters again (ZERO3), as compiled so far."""
        return self.reduce_scatter is not None and bool(self.reduce_scatter.regathered)

    def __call__(self, *args, **kwargs):
        from thunder.distributed.fsdp_gradients import NeedsFSDPEngine

        if not self.runs_hooks:  # FSDP2's hooks ran around this call
            self._warn_once()
            return self._function(gathering=False)(*args, **kwargs)
        state = self.module._get_fsdp_state()
        if state._is_root is None:  # no unit above ran FSDP2's lazy initialization, which makes this one a root
            state._lazy_init()
        gather = self.can_gather()
        if torch.is_grad_enabled() and self.refused is None:
            self.unsynced = not param_group(self.module).reduce_grads
        if gather:
            try:
                output = self._gather(args, kwargs)
                self.paths.add("trace")
                return output
            except NeedsFSDPEngine as e:  # raised while compiling, the same on every rank, before the program ran
                self.refused = str(e)
        self.paths.add("hooks")
        self.boundary.discard_pending(self)
        self._warn_once()
        args, kwargs = state._pre_forward(self.module, args, kwargs)
        output = self._function(gathering=False)(*args, **kwargs)
        return state._post_forward(self.module, args, output)

    def _warn_once(self) -> None:
        if self.refused is not None and not self.warned:
            self.warned = True
            warnings.warn(f"thunder: FSDP2 all-gathers the parameters of {self.name} and reduce-scatters its "
                          f"gradients itself, not in thunder's traces, because {self.refused}", stacklevel=4)

    def _gather(self, args, kwargs):
        # the shards as leaves of the call: their gradients, the unit's unsharded gradients, are reduce-scattered
        # in the backward trace and written into the sharded parameters' .grad
        shards = tuple(p._sharded_param_data.detach().requires_grad_(p.sharded_param.requires_grad)
                       for p in param_group(self.module).fsdp_params)
        following = self.boundary.prefetch_target(self)
        next_shards = None if following is None else tuple(p._sharded_param_data
                                                           for p in param_group(following.module).fsdp_params)
        pending = self.boundary.pending.pop(self, None)
        self.boundary.forward_order.append(self)
        try:
            output, issued = self._function(gathering=True)(
                shards, pending, None if following is None else following.module, next_shards, *args, **kwargs)
        except BaseException:
            if pending is not None:
                torch.ops._c10d_functional.wait_tensor(pending)
            raise
        if issued is not None:
            self.boundary.pending[following] = issued
        return output

    def _function(self, *, gathering: bool):
        from thunder.distributed.fsdp_gather import forward_gathering
        from thunder.distributed.fsdp_gradients import FSDPReduceScatter
        from thunder.frontend.jit import ThunderFunction

        if gathering and self.gathering is None:
            options = dict(self.jit_options)
            self.reduce_scatter = FSDPReduceScatter(self.module, lambda: self.boundary.backward_prefetch_target(self))
            options["transforms"] = (*(options.get("transforms") or ()), self.reduce_scatter)
            self.gathering = ThunderFunction(types.MethodType(forward_gathering, self.module), **options)
        if not gathering and self.plain is None:
            self.plain = ThunderFunction(types.MethodType(type(self.module).forward, self.module), **self.jit_options)
        return self.gathering if gathering else self.plain
