"""Running a forward/backward split under PyTorch's autograd.

The compiled forward runs inside one ``torch.autograd.Function`` whose backward is the compiled
backward trace, so ``.backward()``, ``torch.autograd.grad``, accumulation into ``.grad``,
``retain_graph`` and the saved-tensor checks (an input modified in place after the call) all behave
as PyTorch defines them for any autograd node.

The node keeps the saved tensors in a list of its own rather than through ``save_for_backward``, and hands the
list to the backward, which empties it: each saved activation is freed at the backward's ``del`` after its last
use, as eager's engine frees each node's saved tensors once that node ran (``save_for_backward`` would hold them
all until the whole backward returned: a higher peak, and memory touched afresh on every step). It checks what
``save_for_backward`` checks (a saved tensor modified in place before the backward; a second backward without
``retain_graph``) with eager's messages. Where saved-tensor hooks are active (``torch.utils.checkpoint``,
``save_on_cpu``) or functorch transforms run, it uses ``save_for_backward`` so that they see the tensors.
"""

from __future__ import annotations

import operator

import torch

from thunder.core import dtypes
from thunder.core.codegen import compile_trace
from thunder.core.errors import UnsupportedError
from thunder.core.proxies import Proxy, TensorProxy
from thunder.core.pytree import tree_flatten, tree_unflatten
from thunder.frontend.eager_saved_views import eager_saved_views

__all__ = ["bases_of_returned_views", "differentiable_computation", "lone_views_detached", "one_of_several_views",
           "view_made_outside"]


class _Compiled:
    """What the autograd node needs of one cache entry."""

    __slots__ = ("forward", "backward_from_list", "saved_outputs", "zero_cotangents", "static_shapes",
                 "nargs", "differentiable_inputs", "cotangents_used", "differentiable_outputs",
                 "nondifferentiable_outputs", "plain", "single", "backward_trace", "n_saved", "cotangent_names",
                 "specialized", "specialized_traces", "saved_needed_by", "dirty", "accumulating", "lone_views",
                 "shared_views", "n_outputs", "several", "saved_as")

    def __init__(self, forward, backward_trace, split, nargs, differentiable_inputs, differentiable_outputs,
                 n_outputs, single, dirty=(), views=((), ()), several=()):
        self.forward, self.nargs = forward, nargs
        self.dirty = dirty  # positions of the inputs it updates in place and returns (owned buffers)
        # positions of the outputs that are views of a temporary / of an input or another output (returned_views)
        self.lone_views, self.shared_views = views
        self.n_outputs = n_outputs
        # positions of the outputs that are one of several views (views_of_several), which the node's caller makes
        # so (frontend/segment_node.py too, where one node runs several segments)
        self.several = several
        # the backward taking the saved values in one list, which it empties (see the module's docstring)
        self.backward_from_list = compile_trace(backward_trace, first_args_in_list=len(split.saved))
        outputs = {p.name for p in split.forward.output[0] if isinstance(p, TensorProxy)}
        self.saved_outputs = tuple(i for i, p in enumerate(split.saved)
                                   if isinstance(p, TensorProxy) and p.name in outputs)
        # per saved tensor, the view of it eager's node saved (None: the tensor itself), for a failed version check
        self.saved_as = eager_saved_views(split, backward_trace)
        # how to make the zero cotangent of an output the loss does not use (of the shape the forward recorded,
        # where the outputs' shapes are symbolic); with one differentiable output the backward runs only when that
        # output's cotangent exists (backward_of skips a node run without any)
        flat = split.forward.output[0]
        outs = [flat[i] for i in differentiable_outputs]
        self.zero_cotangents, self.static_shapes, self.cotangents_used = None, True, ()
        self.saved_needed_by = ()
        if len(outs) > 1 and all(isinstance(p, TensorProxy) for p in outs):
            self.static_shapes = all(isinstance(d, int) for p in outs for d in p.shape)
            self.zero_cotangents = tuple(_zeros_maker(p) for p in outs)
            from_cotangents = _cotangent_dependencies(backward_trace, len(split.saved))
            self.cotangents_used = _cotangents_used(backward_trace, from_cotangents, split.forward,
                                                    differentiable_inputs, differentiable_outputs)
            self.saved_needed_by = _saved_needed_by(backward_trace, len(split.saved), from_cotangents)
        self.differentiable_inputs = tuple(differentiable_inputs)
        self.differentiable_outputs = tuple(differentiable_outputs)
        self.nondifferentiable_outputs = tuple(i for i in range(n_outputs) if i not in set(differentiable_outputs))
        # the common node: no saved output to detach, no zero cotangents to make, no output to mark (one test per call)
        self.plain = not (self.saved_outputs or self.zero_cotangents or self.nondifferentiable_outputs or dirty
                          or self.shared_views)
        # the node returns its one output as it is, not in a tuple (where the caller wants the value itself)
        self.single = single
        self.backward_trace, self.n_saved = backward_trace, len(split.saved)
        self.cotangent_names = tuple(getattr(p, "name", None) for p in backward_trace.args[len(split.saved):])
        self.specialized = {}  # positions of the unused outputs -> (backward, positions still needing a zero)
        self.specialized_traces = {None: backward_trace}  # positions of the unused outputs -> the backward's trace
        self.accumulating = {}  # as specialized: its variant summing into given buffers (frontend/segment_node.py)

    def without_unused(self, unused: frozenset):
        """The backward (taking the saved values in a list) for the outputs at ``unused`` having no cotangent,
        and the positions among them whose zero it still reads (executors/torch_unused_cotangents.py)."""
        found = self.specialized.get(unused)
        if found is None:
            from thunder.executors.torch_unused_cotangents import without_zero_cotangents

            names = frozenset(self.cotangent_names[k] for k in unused)
            trace, still = without_zero_cotangents(self.backward_trace, names,
                                                   frozenset(n for n in self.cotangent_names if n is not None))
            run = self.backward_from_list if trace is None else compile_trace(trace, first_args_in_list=self.n_saved)
            self.specialized_traces[unused] = self.backward_trace if trace is None else trace
            found = self.specialized[unused] = (run, frozenset(k for k in unused
                                                               if self.cotangent_names[k] in still))
        return found


_saved_tensor_hooks = torch._C._autograd._top_saved_tensors_default_hooks
_keep_graph = torch._C._autograd._get_current_graph_task_keep_graph
_version = operator.attrgetter("_version")
_grad_enabled = torch.is_grad_enabled

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
          "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
          "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


class ThunderAutogradFunction(torch.autograd.Function):
    """The autograd node of a cache entry. Each entry has its own subclass (:func:`_node_function`), whose class
    attribute ``compiled`` is the entry's and whose forward is, for the common node, generated for the entry."""

    compiled: _Compiled

    @staticmethod
    def forward(ctx, *args):
        compiled = ctx._forward_cls.compiled
        flat_out, saved_tensors, saved_others = compiled.forward(*args)
        if compiled.lone_views:
            flat_out = tuple(t.detach() if k in compiled.lone_views else t for k, t in enumerate(flat_out))
        if compiled.shared_views:  # a reshape that copied (the trace could not tell) views memory nothing else holds
            flat_out = lone_views_detached(flat_out, args, compiled.shared_views)
        if _saved_tensor_hooks(False) is None:
            ctx.versions = list(map(_version, saved_tensors))
            ctx.saved = saved = [*saved_tensors, *saved_others]
            for i in compiled.saved_outputs:  # an output held by its own node: a cycle, unless detached
                saved[i] = saved[i].detach()
        else:
            _save_for_hooks(ctx, saved_tensors, saved_others)
        ctx.materialize_grads = False  # see _node_function
        if compiled.zero_cotangents is not None and not compiled.static_shapes:
            ctx.out_shapes = [flat_out[i].shape for i in compiled.differentiable_outputs]
        if compiled.dirty:
            ctx.mark_dirty(*[args[i] for i in compiled.dirty])
        if compiled.nondifferentiable_outputs:
            nondiff = [flat_out[i] for i in compiled.nondifferentiable_outputs if isinstance(flat_out[i], torch.Tensor)]
            if nondiff:
                ctx.mark_non_differentiable(*nondiff)
        return flat_out[0] if compiled.single else flat_out

    @staticmethod
    def backward(ctx, *cotangents):
        # the engine runs a backward with grad mode on only for create_graph=True
        if _grad_enabled():
            return _backward_creating_graph(ctx, *cotangents)
        return _backward(ctx, *cotangents)


def _backward(ctx, *cotangents):
    """The node's backward: the compiled backward on the saved values and the output cotangents."""
    return backward_of(ctx._forward_cls.compiled, ctx, cotangents)


class SavedForBackward:
    """What a node's context keeps of one run of a compiled forward (:func:`run_forward`), for
    :func:`backward_of`: the saved values, the versions of the saved tensors, the shapes of the differentiable
    outputs where the zeros of unused ones are made at run time."""

    __slots__ = ("saved", "versions", "out_shapes")


def run_forward(compiled: _Compiled, args) -> tuple:
    """(the flat outputs, their :class:`SavedForBackward`) of one run of ``compiled``'s forward on ``args``, as the
    node's forward keeps them (no saved-tensor hooks active)."""
    flat_out, saved_tensors, saved_others = compiled.forward(*args)
    record = SavedForBackward()
    record.versions = list(map(_version, saved_tensors))
    record.saved = saved = [*saved_tensors, *saved_others]
    for i in compiled.saved_outputs:  # an output held by its own node: a cycle, unless detached
        saved[i] = saved[i].detach()
    if compiled.zero_cotangents is not None and not compiled.static_shapes:
        record.out_shapes = [flat_out[i].shape for i in compiled.differentiable_outputs]
    return flat_out, record


def backward_of(compiled: _Compiled, ctx, cotangents, run_backward=None) -> tuple:
    """The gradients of the inputs of one run of ``compiled`` (its saved values in ``ctx``: a node's context or a
    :class:`SavedForBackward`) given the cotangents of all its outputs (None where the loss does not use one).
    ``run_backward(compiled, unused, run, saved, cotangents)``: runs the compiled backward ``run`` (specialized for
    the positions ``unused`` of the outputs without a cotangent, None where every one has one) in place of
    ``run(saved, *cotangents)``."""
    cotangents = [cotangents[i] for i in compiled.differentiable_outputs]
    if all(c is None for c in cotangents):
        # the engine runs a node that no gradient reached (a node after it took one of its outputs and gives it
        # none: a segment's output handed on as it is); eager's graph has no such path and runs none of its nodes
        return (None,) * compiled.nargs
    unused = None
    if compiled.zero_cotangents is not None and None in cotangents:
        unused = frozenset(k for k, c in enumerate(cotangents) if c is None)  # outputs the loss does not use
    saved = ctx.saved
    if saved is None and not hasattr(ctx, "versions"):  # kept by save_for_backward
        if unused is not None:
            cotangents = _with_zeros(ctx, compiled, cotangents, unused)
        # the backward taking the saved values as arguments, compiled only for a node that ran under hooks
        grads = compiled.backward_trace.python_callable()(*ctx.saved_tensors, *ctx.saved_others, *cotangents)
    else:
        if saved is None:
            raise RuntimeError(_FREED)
        if unused is None:
            _check_versions(saved, ctx.versions, compiled.saved_as)
        else:  # eager's nodes that only the unused outputs reach never run, nor check what they saved
            checked = [k for k, needed in zip(range(len(ctx.versions)), compiled.saved_needed_by)
                       if not (needed and needed <= unused)]
            saved_as = compiled.saved_as
            _check_versions([saved[k] for k in checked], [ctx.versions[k] for k in checked],
                            saved_as and [saved_as[k] for k in checked])
            del checked  # it holds every saved tensor: the backward frees each after its last use, as eager's nodes
        if _keep_graph():
            saved = list(saved)  # the backward empties the list it gets
        else:
            ctx.saved = None
        run = compiled.backward_from_list
        if unused is not None:
            run, zeros = compiled.without_unused(unused)
            cotangents = _with_zeros(ctx, compiled, cotangents, zeros)
        grads = run(saved, *cotangents) if run_backward is None else run_backward(compiled, unused, run, saved,
                                                                                   cotangents)
    result = [None] * compiled.nargs
    for i, g in zip(compiled.differentiable_inputs, grads):
        result[i] = g
    if unused is not None:  # eager's graph reaches an input only from the outputs the loss uses
        for i, used in zip(compiled.differentiable_inputs, compiled.cotangents_used):
            if used and used <= unused:
                result[i] = None
    return tuple(result)


_DOUBLE_BACKWARD = (
    "thunder.jit: differentiating the gradient of a jitted function (computed with create_graph=True{where}) again, "
    "by a second backward through it, torch.autograd.functional.hessian or a gradient penalty, is not supported: "
    "thunder's compiled backward is not itself differentiated.{early} Compute higher-order gradients with the function "
    "not jitted, or jit only a part of it whose first-order gradient is all you need (docs/higher-order.md)")
# where an input of the node is made by an op, the gradient cannot be tied to it: refused at the first backward
_EARLY = (" Refused already at create_graph=True: an input of the jitted function is made by an op (not a leaf), which "
          "its gradient cannot be tied to so as to refuse only the second differentiation.")


def _backward_creating_graph(ctx, *cotangents, backward=None):
    """The backward under ``create_graph=True``: first-order gradients as usual; where an input requires grad they
    require grad too (as eager's), through a node that raises thunder's reason if a second differentiation reaches
    it, never a gradient silently cut off from its inputs (which ``torch.autograd.grad(..., allow_unused=True)``, as
    in ``torch.autograd.functional.hessian``, reads as zero). That node's edges go to the inputs themselves; an
    input made by an op (not a leaf) is no tensor this backward can reach, so there the reason is raised at once.
    ``backward``: the node's first-order backward (``_backward`` when None)."""
    with torch.no_grad():
        grads = (backward or _backward)(ctx, *cotangents)
    if not any(ctx.needs_input_grad) or all(g is None for g in grads):
        return grads
    where = _user_location()
    # the node's edges, to its tensor inputs that require grad (in order: those ``needs_input_grad`` marks; the
    # others have none or an empty one): a leaf's accumulator holds the leaf
    edges = iter([node for node, _ in torch._C._current_autograd_node().next_functions if node is not None])
    inputs = [getattr(next(edges), "variable", None) if needed else None for needed in ctx.needs_input_grad]
    if any(g is not None and x is None for g, x in zip(grads, inputs)):
        raise UnsupportedError(_DOUBLE_BACKWARD.format(where=where, early=_EARLY))
    message = _DOUBLE_BACKWARD.format(where=where, early="")
    # each gradient tied to every input (it may depend on any of them: x's on w in ``(x * w).sum()``)
    leaves = [x for x in inputs if x is not None]
    return tuple(None if g is None else _RefusesDifferentiation.apply(message, g, *leaves) for g in grads)


class _RefusesDifferentiation(torch.autograd.Function):
    """``g`` (a first-order gradient) as a value computed from the node's inputs, whose differentiation raises
    thunder's reason."""

    @staticmethod
    def forward(ctx, message, g, *inputs):
        ctx.message = message
        return g.view_as(g)

    @staticmethod
    def backward(ctx, grad):
        raise UnsupportedError(ctx.message)


def _user_location() -> str:
    """`` at file:line (`source`)``: the user's line that asked for the gradient (the first frame outside torch and
    thunder), or '' where there is none."""
    import linecache
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not any(part in name for part in ("/torch/", "/thunder/", "<thunder")):
            line = linecache.getline(name, frame.f_lineno).strip()
            return f" at {name}:{frame.f_lineno}" + (f" (`{line}`)" if line else "")
        frame = frame.f_back
    return ""


def _with_zeros(ctx, compiled, cotangents, positions) -> list:
    """``cotangents`` with a zero at each of ``positions`` (outputs the loss does not use): a zero of the output's
    shape that is one number, not a zero-filled tensor."""
    shapes = [None] * len(cotangents) if compiled.static_shapes else ctx.out_shapes
    return [make(shape) if k in positions else c
            for k, (c, make, shape) in enumerate(zip(cotangents, compiled.zero_cotangents, shapes))]


def _cotangent_dependencies(backward_trace, n_saved: int) -> dict:
    """name -> the positions of the output cotangents each value of the backward is computed from."""
    return _dependencies(backward_trace, {p.name: frozenset((k,)) for k, p in enumerate(backward_trace.args[n_saved:])
                                          if isinstance(p, Proxy)})


def _cotangents_used(backward_trace, deps: dict, forward_trace, differentiable_inputs, differentiable_outputs):
    """For each gradient the backward returns, the positions of the output cotangents eager's graph would reach
    its input from: those the backward computes it from (``deps``: :func:`_cotangent_dependencies`), and the outputs
    its input reaches in the forward through tensors that require grad (a zero-derivative op, ``floor``, leaves no
    trace in the backward, yet eager's graph runs through it and gives a zero gradient, not None)."""
    out = backward_trace.output
    from_backward = [deps.get(g.name, frozenset()) if isinstance(g, Proxy) else frozenset()
                     for g in (out if isinstance(out, (tuple, list)) else (out,))]
    args = forward_trace.args
    reached = _dependencies(forward_trace, {args[i].name: frozenset((n,)) for n, i in enumerate(differentiable_inputs)
                                            if isinstance(args[i], Proxy)}, through_grad_only=True)
    from_forward = [set() for _ in from_backward]
    flat = forward_trace.output[0]
    for k, i in enumerate(differentiable_outputs):
        for n in reached.get(getattr(flat[i], "name", None), ()):
            if n < len(from_forward):
                from_forward[n].add(k)
    return tuple(b | frozenset(f) for b, f in zip(from_backward, from_forward))


def _saved_needed_by(backward_trace, n_saved: int, cotangents: dict) -> tuple:
    """For each saved value, the positions of the output cotangents the backward combines it with (directly or
    through values computed from saved ones only; ``cotangents``: :func:`_cotangent_dependencies`): where all of
    them are unused, eager's node that saved it does not run. Empty: combined with none (checked whatever is
    unused)."""
    origin = {p.name: {i} for i, p in enumerate(backward_trace.args[:n_saved]) if isinstance(p, Proxy)}
    needed = [frozenset()] * n_saved
    for b in _data_flow(backward_trace.bound_symbols):
        saved = set().union(*(origin.get(a.name, ()) for a in b.flat_proxy_args))
        meets = frozenset().union(*(cotangents.get(a.name, ()) for a in b.flat_proxy_args))
        if meets:
            for i in saved:
                needed[i] |= meets
        else:
            for o in b.flat_proxy_outs:
                origin.setdefault(o.name, set()).update(saved)
    return tuple(needed)


def _dependencies(trace, deps: dict, through_grad_only: bool = False) -> dict:
    """name -> the union of ``deps`` of the values each value of ``trace`` is computed from (``through_grad_only``:
    through tensors that require grad, as eager's autograd graph)."""
    for b in _data_flow(trace.bound_symbols):
        d = frozenset().union(*(deps.get(a.name, ()) for a in b.flat_proxy_args))
        if not d:
            continue
        outs = b.flat_proxy_outs
        if not outs and b.args and isinstance(b.args[0], Proxy):
            outs = (b.args[0],)  # an in-place store (``index_put_(zeros, ...)``, executors/torch_stores.py)
        for o in outs:
            if not through_grad_only or (isinstance(o, TensorProxy) and o.requires_grad):
                deps[o.name] = deps.get(o.name, frozenset()) | d
    return deps


def _data_flow(bsyms):
    """``bsyms`` with each fusion (or other composite) replaced by the symbols inside it where those compute all its
    outputs: a fusion region joins computations that share no data (the gradients of two inputs from two different
    outputs' cotangents), which taken as one would make each depend on both (fuzz seed 7297 with Inductor: an
    input read only by dead code got a zero gradient where eager's is None)."""
    for b in bsyms:
        inner = list(_data_flow(b.subsymbols)) if b.subsymbols else ()
        made = {o.name for s in inner for o in s.flat_proxy_outs}
        if inner and all(o.name in made for o in b.flat_proxy_outs):
            yield from inner
        else:
            yield b


def _save_for_hooks(ctx, saved_tensors, saved_others) -> None:
    # saved-tensor hooks (torch.utils.checkpoint, save_on_cpu) see the tensors only through save_for_backward
    ctx.save_for_backward(*saved_tensors)
    ctx.saved = None
    ctx.saved_others = saved_others


def _node_function(compiled: _Compiled, n_saved_tensors: int) -> type:
    """The entry's subclass of ThunderAutogradFunction. For the common node (nothing to detach, mark or
    materialize) its forward is generated: the saved tensors unpacked by name and their versions read one by one,
    not through a loop and a map, a few tenths of a microsecond of each call of a small program.

    No node materializes the gradients of its outputs (``set_materialize_grads(False)``): the engine also runs a
    node none of whose outputs got a gradient (a later node took an output and gave it none), which the backward
    then skips, as eager's graph never reaches it."""
    namespace = {"compiled": compiled}
    if compiled.plain:
        args = ", ".join(f"a{i}" for i in range(compiled.nargs))
        saved = "".join(f"s{i}, " for i in range(n_saved_tensors))
        source = (
            f"def forward(ctx, {args}):\n"
            f"    ctx.materialize_grads = False\n"
            f"    flat_out, ({saved}), saved_others = run({args})\n"
            f"    if saved_tensor_hooks(False) is None:\n"
            f"        ctx.saved = [{saved}*saved_others]\n"
            f"        ctx.versions = [{', '.join(f's{i}._version' for i in range(n_saved_tensors))}]\n"
            f"    else:\n"
            f"        save_for_hooks(ctx, ({saved}), saved_others)\n"
            f"    return {_returned(compiled)}\n")
        scope = {"run": compiled.forward, "saved_tensor_hooks": _saved_tensor_hooks, "save_for_hooks": _save_for_hooks}
        exec(compile(source, f"<thunder autograd node forward {id(compiled):x}>", "exec"), scope)
        namespace["forward"] = staticmethod(scope["forward"])
    # the class's name is what grad_fn shows: ThunderAutogradFunctionBackward
    return type("ThunderAutogradFunction", (ThunderAutogradFunction,), namespace)


def _returned(compiled: _Compiled) -> str:
    """The generated forward's return value: its outputs, views of temporaries as plain aliases (returned_views)."""
    def out(k):
        return f"flat_out[{k}].detach()" if k in compiled.lone_views else f"flat_out[{k}]"

    if compiled.single:
        return out(0)
    if not compiled.lone_views:
        return "flat_out"
    return "(" + "".join(f"{out(k)}, " for k in range(compiled.n_outputs)) + ")"


def _zeros_maker(p):
    from thunder.core import dtypes

    dtype, device = dtypes.to_torch_dtype(p.dtype), p.device.to_torch()
    static = tuple(p.shape) if all(isinstance(d, int) for d in p.shape) else None

    def make(shape):
        zero = torch.zeros((), dtype=dtype, device=device).expand(static if static is not None else shape)
        zero.of_an_unused_output = True  # eager never reaches the ops that made that output (raise_in_backward)
        return zero

    return make


# dtypes with a legacy tensor type (torch.FloatTensor): eager's message names the others by ScalarType
# ("CPUBFloat16Type", "CPUBoolType", as torch/csrc/autograd/saved_variable.cpp prints them)
_LEGACY_TENSOR_TYPES = frozenset({torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
                                  torch.float32, torch.float64})


def _made_by(t: torch.Tensor) -> str:
    """The node eager's message names for the saved tensor ``t``: an input the node saved names the node that made it
    now, as eager's does (CopySlices after an update through a view); a tensor the node made has no grad_fn here,
    where eager names the op inside."""
    try:
        node = t.grad_fn
    except RuntimeError:  # a view the forward made (without grad) of memory updated since: eager's view, made with
        # grad of a tensor requiring it, is regenerated as an as_strided of its base
        return ", which is output 0 of AsStrided," if t._base.requires_grad else ""
    return f", which is output {t.output_nr} of {node.name()}," if node is not None else ""


def _check_versions(saved, versions, saved_as=()) -> None:
    """Eager's error where a saved tensor was updated in place since the forward. ``saved_as``: per saved tensor,
    the view of it eager's node saved, or None (:func:`eager_saved_views`; empty where every one is itself)."""
    if list(map(_version, saved[:len(versions)])) == versions:  # the common case, without a Python loop
        return
    for k, (t, v) in enumerate(zip(saved, versions)):
        if t._version != v:
            # eager's message (torch/csrc/autograd/saved_variable.cpp)
            kind = t.type() if t.dtype in _LEGACY_TENSOR_TYPES else \
                f"{t.device.type.upper()}{dtypes.torch_scalar_name(dtypes.to_dtype(t.dtype))}Type"
            view = saved_as[k] if saved_as else None
            shape, made_by = (list(t.shape), _made_by(t)) if view is None else \
                (view[0](t), ", which is output 0 of AsStrided," if view[1] else "")
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an inplace operation: "
                f"[{kind} {shape}]{made_by} is at version {t._version}; expected version {v} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False).")


def differentiable_computation(forward_fn, backward_trace, split, nargs: int, dirty=(), constrain=None):
    """(the cache entry's computation: ``computation(*inputs)`` recording one autograd node; what that node runs,
    which frontend/segment_node.py also runs as part of one node for several segments). ``dirty``: the positions
    of the inputs it updates in place and returns (a segment's owned buffers); ``constrain``: the trace whose
    constraints the prologue checks (:func:`views_of_several`)."""
    if torch._C._are_functorch_transforms_active():
        raise UnsupportedError(
            "thunder.jit: a program whose inputs require grad called under a torch.func transform (grad, vjp, jacrev, "
            "...) is not supported: its forward and backward run as one torch.autograd.Function, which functorch "
            "does not differentiate. Apply the transform inside the jitted function, or call the function without "
            "thunder.jit under the transform.")
    n_outputs = len(split.forward.output[0])
    spec = split.output_spec
    # outputs that are inputs returned as they are: the caller gets its own tensor back, not an alias
    # made by the autograd node (identity matters: `out is x`, attributes stored by the epilogue)
    passthrough = passthrough_outputs(split)
    views = returned_views(split, constrain) if not dirty else ((), ())
    several = views_of_several(split, constrain)
    compiled = _Compiled(forward_fn, backward_trace, split, nargs, split.differentiable_inputs,
                         split.differentiable_outputs, n_outputs,
                         single=not passthrough and not views[1] and spec.kind == "leaf", dirty=dirty, views=views,
                         several=several)
    shared_views = compiled.shared_views
    is_grad_enabled, set_grad_enabled = torch.is_grad_enabled, torch._C._set_grad_enabled
    # torch._C._FunctionBase.apply bound to the entry's class: Function.apply's Python part only unwraps functorch's
    # dead wrappers (a walk over every argument, a few microseconds on each call), so the node is created in C++
    # directly. The prologue has checked that no functorch transform is active (a call under one compiles anew and
    # is refused above), under which Function.apply would refuse the node and the C++ call fail an assertion.
    node_apply = _without_edges_to(_never_differentiated(backward_trace, split, dirty), super(
        torch.autograd.Function, _node_function(compiled, len(split.forward.output[1]))).apply)

    if not compiled.differentiable_outputs and not passthrough:
        # no output gradients can flow from (an optimizer step): the node would never run a backward, so the
        # forward runs as the node's would, with grad mode off, but without the node's cost on every call
        def computation(*args):
            mode = is_grad_enabled()
            set_grad_enabled(False)
            try:
                flat = forward_fn(*args)[0]
            finally:
                set_grad_enabled(mode)
            if passthrough:
                flat = list(flat)
                for k, i in passthrough:
                    flat[k] = args[i]
            return tree_unflatten(flat, spec)
    elif compiled.single and not several:  # one value: the node returns it as it is, no Python frame
        computation = node_apply
    elif not (passthrough or shared_views or several) and spec.kind is tuple and all(
            c.kind == "leaf" for c in spec.children):
        computation = node_apply  # a flat tuple (a segment's outputs, frontend/segments.py): no tree to rebuild
    elif not (passthrough or shared_views or several):
        def computation(*args):
            return tree_unflatten(node_apply(*args), spec)
    else:
        def computation(*args):
            out = node_apply(*args)
            flat = [out] if compiled.single else list(out)
            for k, i in passthrough:
                flat[k] = args[i]
            for k in shared_views:
                flat[k] = view_made_outside(flat[k], flat, args)
            for k in several:
                flat[k] = one_of_several_views(flat[k])
            return tree_unflatten(flat, spec)

    grad_mode_after = _grad_mode_left(split.forward)
    if grad_mode_after is None:
        return computation, compiled

    def leaving_grad_mode(*args):
        # autograd.Function.forward restores grad mode when it returns: the program's own change
        # (torch.set_grad_enabled(False) left in effect) is made again after it, as eager leaves it
        result = computation(*args)
        torch._C._set_grad_enabled(grad_mode_after)
        return result

    return leaving_grad_mode, compiled


def _never_differentiated(backward_trace, split, dirty=()) -> tuple:
    """Positions of the inputs that may require grad whose gradient the backward never computes (an input read by
    a comparison only, handed on as it is, or only its size): eager's graph has no edge to what made them. None
    where the backward has effects of its own (FSDP's gradient writes, collectives): it must run although it gives
    the unsharded parameters no gradient."""
    from thunder.transforms.del_last_used import DEL

    if any("side_effect" in b.sym.tags and b.sym.id != DEL.id for b in backward_trace.bound_symbols):
        return ()
    out = backward_trace.output
    grads = out if isinstance(out, (tuple, list)) else (out,)
    return tuple(i for i, g in zip(split.differentiable_inputs, grads) if g is None and i not in dirty)


def _without_edges_to(positions, node_apply):
    """``node_apply`` taking the tensors at ``positions`` detached: the engine would run the node that made one (a
    segment's, a custom Function's) with a gradient it materializes, where eager's graph never reaches it."""
    if not positions:
        return node_apply

    def apply(*args):
        args = list(args)
        for i in positions:
            if args[i].requires_grad:
                args[i] = args[i].detach()
        return node_apply(*args)

    return apply


def returned_views(split, constrain=None) -> tuple:
    """(positions of the outputs of ``split``'s forward that are views of a temporary nothing else returned holds,
    positions of those that are views of an input or of another output). A view an autograd node returns is one
    PyTorch forbids updating in place ("Output 0 of ThunderAutogradFunction is a view and is being modified
    inplace"), where eager's views allow it: the node returns the first as plain aliases (the same memory and version
    counter, no view relation: an update is recorded on the node's output, the same gradient as eager's since
    nothing else sees that memory) and the second are made again outside it (:func:`view_made_outside`). Several
    views of one temporary are views of an output the node returns for them (:func:`bases_of_returned_views`).
    ``constrain``: as :class:`_ViewChains`'."""
    chains = _ViewChains(split.forward, constrain)
    inputs = {p.name for p in split.forward.args if isinstance(p, Proxy)}
    outs = [p.name if isinstance(p, TensorProxy) else None for p in split.forward.output[0]]
    roots = [chains.root(n) if n is not None else None for n in outs]
    lone, shared = [], []
    for k, (name, r) in enumerate(zip(outs, roots)):
        if name is None or r == name or name in inputs:
            continue
        if r in inputs or r in outs:
            shared.append(k)
        elif roots.count(r) == 1:
            lone.append(k)
    return frozenset(lone), tuple(shared)


class _ViewChains:
    """The chains of views of a trace, as eager's autograd sees them: a reshape that copies (eager decides by the
    strides: the jit's layouts, asked only of the reshapes a question walks through) ends one, and so does an alias
    autograd does not track (``detach``). ``constrain``: the trace whose constraints the prologue checks (the
    layouts' answer may depend on symbolic sizes), ``trace`` where None."""

    def __init__(self, trace, constrain=None):
        from thunder.transforms.functionalize import UNTRACKED_ALIASES, is_view

        self.view_of = {o.name: (b.args[0].name, b) for b in trace.bound_symbols
                        if is_view(b) and b.sym.id not in UNTRACKED_ALIASES and b.args
                        and isinstance(b.args[0], TensorProxy) for o in b.flat_proxy_outs}
        self._trace, self._constrain, self._layouts = trace, constrain, None

    def base(self, name: str) -> str | None:
        """The name of the tensor ``name`` is a view of, None where it is none's."""
        from thunder.transforms.layouts import MAYBE_VIEWS, Layouts

        base, b = self.view_of.get(name, (None, None))
        if b is not None and b.sym.id in MAYBE_VIEWS:
            if self._layouts is None:
                self._layouts = (self._trace.layouts or Layouts()).replay_from(self._trace, self._constrain)
            if not self._layouts.aliases(b):
                return None
        return base

    def root(self, name: str) -> str:
        """The end of ``name``'s chain of views (``name`` itself where it is no view)."""
        while (base := self.base(name)) is not None:
            name = base
        return name


def bases_of_returned_views(trace, constrain=None) -> tuple:
    """The temporaries of ``trace`` (a functional computation) of which several outputs are views. Eager's views of
    one non-leaf tensor may be updated in place by the caller (each update recorded on their base, which the others
    then see); the views an autograd node returns may not be, and aliases made of them would give each update's
    gradient to one view only. So the node returns each such base too (an output the caller never sees, split's
    ``hidden_outputs``), and the views are made again outside it from that output (:func:`view_made_outside`)."""
    root = _ViewChains(trace, constrain).root
    made = {o.name: o for b in trace.bound_symbols for o in b.flat_proxy_outs if isinstance(o, TensorProxy)}
    inputs = {p.name for p in trace.args if isinstance(p, Proxy)}
    outs = [p.name for p in tree_flatten(trace.output)[0] if isinstance(p, TensorProxy)]
    roots = [root(n) for n in outs if root(n) != n]
    return tuple(made[r] for r in dict.fromkeys(roots)
                 if roots.count(r) > 1 and r in made and r not in inputs and r not in outs)


def views_of_several(split, constrain=None) -> tuple:
    """Positions of the outputs of ``split``'s forward that are one of the views an op returning several views made
    (``unbind``, ``split``, ``chunk``), or a view of one: eager refuses to update those in place while they require
    grad ("Output 0 of UnbindBackward0 is a view and is being modified inplace"), the caller's updates included.
    A reshape that copies (as eager's decides, by the strides: the jit's layouts) ends the chain: its result is a
    new tensor the caller may update. ``constrain``: the trace whose constraints the prologue checks (the layouts'
    answer may depend on symbolic sizes)."""
    chains = _ViewChains(split.forward, constrain)
    made = {o.name for b in split.forward.bound_symbols if isinstance(b.output, (tuple, list))
            for o in b.flat_proxy_outs if o.name in chains.view_of}

    def one_of_several(name):
        while name is not None and name not in made:
            name = chains.base(name)
        return name is not None

    inputs = {p.name for p in split.forward.args if isinstance(p, Proxy)}
    return tuple(k for k, p in enumerate(split.forward.output[0])
                 if isinstance(p, TensorProxy) and p.name not in inputs and one_of_several(p.name))


def one_of_several_views(t):
    """``t`` as one of several views of itself (the same memory and layout): updating it in place while it requires
    grad raises eager's error for the outputs of ``unbind``."""
    if not isinstance(t, torch.Tensor) or not t.requires_grad:
        return t
    return t.unsqueeze(0).unbind(0)[0]


def lone_views_detached(flat_out, args, positions):
    """The node's outputs with each view (at ``positions``) of memory that neither an input nor another output
    holds made a plain alias (its memory and version counter, no view relation): the caller may update it in place
    as eager's view of a temporary, and the update is recorded on the node's output (eager records it on the view:
    the same gradient, as nothing else sees that memory)."""
    bases = [t._base if isinstance(t, torch.Tensor) and t._is_view() else t for t in flat_out]
    # an input's memory, also where it came detached (an input the backward never differentiates)
    holders = {a.untyped_storage()._cdata for a in args if isinstance(a, torch.Tensor)}
    seen: dict[int, int] = {}
    for b in bases:
        if isinstance(b, torch.Tensor):
            seen[id(b)] = seen.get(id(b), 0) + 1
    flat_out = list(flat_out)
    for k in positions:
        t, base = flat_out[k], bases[k]
        if (isinstance(t, torch.Tensor) and base is not t and base.untyped_storage()._cdata not in holders
                and seen[id(base)] == 1):
            flat_out[k] = t.detach()
    return tuple(flat_out)  # a node's outputs: a tuple (a list would be one opaque value)


def view_made_outside(t, flat, args):
    """``t``, an output of the node that is a view of one of its inputs or of another of its outputs, made again
    outside the node as a view of that tensor (``as_strided`` of its memory): updating it in place is then recorded
    on that tensor, as in eager."""
    if not isinstance(t, torch.Tensor) or not t._is_view():
        return t
    base = t._base  # the end of the chain of views: also where that tensor is itself a view (a segment's input, a
    # view of a temporary an earlier segment's node returned), made of it as eager's view of the temporary is
    if base.dtype != t.dtype or base.requires_grad != t.requires_grad or not (
            any(_same_base(a, base) for a in args) or any(_same_base(o, base) for o in flat)):
        return t
    return base.as_strided(t.size(), t.stride(), t.storage_offset())


def _same_base(a, base) -> bool:
    return a is base or (isinstance(a, torch.Tensor) and a._base is base)


def passthrough_outputs(split) -> tuple:
    """(output position, input position) of each output of ``split``'s forward that is one of its inputs returned as
    it is: the caller gets that very tensor back, not an alias made by an autograd node (identity matters: ``out is
    x``, attributes stored by the epilogue)."""
    names = {p.name: i for i, p in enumerate(split.forward.args)}
    return tuple((k, names[p.name]) for k, p in enumerate(split.forward.output[0]) if getattr(p, "name", None) in names)


def _grad_mode_left(trace):
    """The grad mode the program leaves in effect, when it is not the one it started in (None otherwise)."""
    modes = [bool(b.args[0]) for b in trace.bound_symbols if b.sym.id == "prims.set_grad_enabled"]
    return modes[-1] if modes and modes[-1] != trace.grad_enabled else None
