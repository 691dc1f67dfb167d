"""Building the prologue trace: reach every outside value the computation used by its provenance
path, check what the compiled program assumed, and return the computation's inputs."""

from __future__ import annotations

import re
import types

from thunder.core import dtypes, prims
from thunder.core.prims import AnyProxy
from thunder.core.proxies import IntegerProxy, NumberProxy
from thunder.core.trace import TraceCtx, get_tracectx, tracectx
from thunder.frontend.autocast import check_autocast_state
from thunder.frontend.paths import PathReacher
from thunder.frontend.tensor_guards import tensor_guard
from thunder.interpreter import Provenance

__all__ = ["InputRecord", "build_prologue", "proxy_name_for", "state_tensors"]


class InputRecord:
    """An outside value the traced program read: its provenance, the value, and what to check.

    ``check`` is one of "tensor" (the value is ``proxy``), "literal" (equality with ``value``),
    "len" (a list or tuple whose length was baked in), "keys" (the keys of a dict or set in order, ``value``),
    "is" (identity), "type" (the exact type), "class" (the exact type is ``value``), or None (only a path step).
    """

    __slots__ = ("provenance", "value", "check", "proxy")

    def __init__(self, provenance: Provenance, value, check: str | None, proxy=None):
        self.provenance, self.value, self.check, self.proxy = provenance, value, check, proxy


_SKIP_IN_NAMES = {"__dict__", "__self__", "_parameters", "_modules", "_buffers"}


def proxy_name_for(prov: Provenance, fn) -> str:
    """A readable name from an access path: ``args[0]`` of ``f(a, b)`` -> ``a``;
    ``self.__dict__['_modules']['fc1'].__dict__['_parameters']['weight']`` -> ``fc1_weight``."""
    parts = []
    for kind, key in prov.path():
        if kind == "arg":
            parts.append(_parameter_name(fn, key))
        elif kind in ("kwarg", "global", "builtin", "closure_cell", "default", "attr", "item"):
            if type(key) not in (str, int, bool):
                parts.append(type(key).__name__.lower())  # a tensor key (optimizer state): its kind, not its repr
            elif str(key) not in _SKIP_IN_NAMES:
                parts.append(str(key))
    name = re.sub(r"\W+", "_", "_".join(parts)).strip("_") or "x"
    if name[0].isdigit() or name in ("args", "kwargs", "fn"):
        name = "t_" + name
    return name


def _parameter_name(fn, index: int) -> str:
    """The name of positional parameter ``index`` of ``fn`` (a function, bound method, or callable object
    such as a module, whose ``forward``/``__call__`` is used, skipping ``self``)."""
    skip = 0
    target = fn
    if not hasattr(getattr(fn, "__func__", fn), "__code__"):
        target = getattr(type(fn), "forward", None) or getattr(type(fn), "__call__", None)
        skip = 1
    elif hasattr(fn, "__func__"):
        target, skip = fn.__func__, 1
    code = getattr(target, "__code__", None)
    if code is not None and index + skip < code.co_argcount:
        return code.co_varnames[index + skip]
    return f"arg{index}"


def build_prologue(records: list[InputRecord], computation_args: list, fn, nargs: int, kwnames: tuple, *,
                   checks: bool = True, computation: TraceCtx | None = None,
                   distinct_storage: bool = False, aliases: dict | None = None,
                   strides: dict | None = None, tensor_facts: dict | None = None) -> TraceCtx:
    """``checks=False`` (cache='same input') only unpacks the computation's inputs. ``strides``: input name ->
    the layout the program relied on ("contiguous" or exact strides); ``tensor_facts``: input name -> {method name:
    its answer} for other facts it relied on (``storage_offset``, ``is_inference``)."""
    strides = strides or {}
    trace = TraceCtx("prologue")
    trace.names.update(p.name for p in computation_args)
    trace.args = ["*args", "**kwargs"]
    with tracectx(trace):
        args_p, kwargs_p = AnyProxy("args"), AnyProxy("kwargs")
        reacher = PathReacher(trace, fn, args_p, kwargs_p)
        reach = reacher.reach
        if checks:
            prims.check_arg_count(args_p, kwargs_p, nargs, kwnames)
            if computation is not None:
                # grad mode decides what autograd records and what in-place updates of leaves may do
                prims.check_grad_mode(computation.grad_enabled)
                # the caller's autocast decides which casts the trace recorded
                check_autocast_state()
        if checks and computation is not None:
            # process-wide switches the trace followed (the default dtype, deterministic algorithms, ...)
            for query, answer in computation.state_reads.items():
                prims.check_state(reacher.ref(query, query.__name__), answer)

        parents = set()
        for r in records:
            p = r.provenance.parent
            while p is not None:
                parents.add(p)
                p = p.parent

        checked: set = set()
        no_hooks: list = []  # (module __dict__ or hooks globals, names of hook dicts that were empty)
        for r in records:
            check = "type" if r.check == "class" else r.check  # both say type(x) is T
            identity = (r.provenance, check if isinstance(check, str) or check is None else id(check[1]))
            if identity in checked:
                continue  # the program read it more than once; one check suffices
            checked.add(identity)
            if r.check == "tensor":
                t = r.proxy
                v = reach(r.provenance, out=t)
                if not checks:
                    continue
                device = reacher.ref(_torch_device(t.device), f"device_{t.device}")
                # the traced value's class (Tensor, Parameter) is tested first: `type(x) is C` is a quarter of
                # what isinstance costs on a torch.Tensor subclass, and any subclass is still accepted after it
                tp = reacher.ref(type(r.value), type(r.value).__name__)
                guard = tensor_guard(r.value, t)
                guard = None if guard is None else reacher.ref(guard, f"{t.name}_guard")
                prims.check_tensor(v, t.shape, device, dtypes.to_torch_dtype(t.dtype), t.requires_grad, tp, guard)
                if t.name in strides:  # the program's meaning depended on them (transforms/layouts.py)
                    prims.check_strides(v, strides[t.name])
                for name, value in (tensor_facts or {}).get(t.name, {}).items():  # storage_offset(), is_inference()
                    prims.check_tensor_method(v, name, value)
                if any(isinstance(d, NumberProxy) for d in t.shape):
                    prims.unpack_dims(v)
                    scope = trace.scopes[-1]
                    scope[-1] = scope[-1].replace(output=tuple(d if isinstance(d, NumberProxy) else None for d in t.shape))
            elif r.check == "number":
                v = reach(r.provenance, out=r.proxy)
                if checks:
                    prims.check_type(v, r.proxy.python_type)
            elif not checks:
                continue
            elif r.check == "literal":
                prims.check_literal(reach(r.provenance), r.value)
            elif r.check == "len":
                prims.check_len(reach(r.provenance), len(r.value))
            elif r.check == "keys":  # a dict or set iterated after the program changed it: its original keys
                prims.check_literal(reacher.keys(r.provenance), r.value)
            elif isinstance(r.check, tuple) and r.check[0] == "contains":
                _, key, present, key_path = r.check
                prims.check_contains(reach(r.provenance), key if key_path is None else reach(key_path), present)
            elif isinstance(r.check, tuple) and r.check[0] == "empty_items":
                no_hooks.append((reach(r.provenance), r.check[1]))
            elif isinstance(r.check, tuple) and r.check[0] == "hasattr":
                _, name, present = r.check
                prims.check_hasattr(reach(r.provenance), name, present)
            elif r.check in ("type", "class"):
                tp = r.value if r.check == "class" else type(r.value)
                prims.check_type(reach(r.provenance), reacher.ref(tp, tp.__name__))
            elif r.check == "is" and not (r.provenance in parents and isinstance(r.value, types.ModuleType)):
                # a Python module read only for its attributes is checked by them; anything else by identity
                # (a function with the same code may hold other closure cells)
                prims.check_is(reach(r.provenance), reacher.ref(r.value, _ref_name(r.value)))
        if no_hooks:
            _check_no_hooks(reacher, no_hooks)
        if checks and computation is not None and computation.constraints:
            structural = len(trace.bound_symbols)
            _check_constraints(computation)
            _hoist_number_checks(trace.bound_symbols, structural)
        aliases = aliases or {}
        if checks and distinct_storage:
            # the program updates inputs in place, so which inputs are one tensor matters: keep it so
            for name, first in aliases.items():
                alias = next(r.proxy for r in records if r.check == "tensor" and r.proxy.name == name)
                prims.check_is(alias, first)
        if checks and distinct_storage:
            # the program updates inputs in place: a call with aliased inputs must not reuse this entry
            tensors = [r.proxy for r in records if r.check == "tensor" and r.proxy.name not in aliases]
            if len(tensors) > 1:
                prims.check_distinct_storage(*dict.fromkeys(tensors))
        trace.output = tuple(computation_args)
    return trace


def state_tensors(records: list[InputRecord]) -> dict:
    """Proxy name -> the tensor traced, of the tensors the prologue reaches from somewhere else than the call's
    arguments (the callable's parameters and buffers, globals, closures)."""
    found = {}
    for r in records:
        if r.check != "tensor":
            continue
        root = r.provenance
        while root.parent is not None:
            root = root.parent
        if root.kind not in ("arg", "kwarg"):
            found[r.proxy.name] = r.value
    return found


def _check_no_hooks(reacher, dicts) -> None:
    """The traced modules ran without hooks. Every hook registration goes through a ``RemovableHandle``,
    which counts them: while the count is unchanged nothing was registered, which costs one comparison;
    otherwise each module's hook dicts are looked at."""
    from torch.utils.hooks import RemovableHandle

    holder = reacher.ref(RemovableHandle, "RemovableHandle")
    prims.check_no_hooks(holder, RemovableHandle.next_id, tuple(keys for _, keys in dicts), *(d for d, _ in dicts))


def _number_definitions(trace: TraceCtx) -> dict:
    """name -> the prim bound symbol that computed that number, anywhere in ``trace`` (subsymbols included)."""
    defs: dict = {}

    def visit(bsyms):
        for b in bsyms:
            if b.sym.is_prim:
                for o in b.flat_proxy_outs:
                    if isinstance(o, NumberProxy):
                        defs.setdefault(o.name, b)
            visit(b.subsymbols)

    visit(trace.bound_symbols)
    return defs


def _check_constraints(computation: TraceCtx) -> None:
    """Recomputes each number the traced program relied on from the inputs, and checks its value."""
    defs = _number_definitions(computation)
    emitted: set = set()
    current = get_tracectx()

    def emit(p):
        b = defs.get(p.name)
        if b is None or p.name in emitted:
            return  # an input (unpacked above) or already computed
        for a in b.flat_proxy_args:
            if isinstance(a, NumberProxy):
                emit(a)
        emitted.add(p.name)
        current.scopes[-1].append(b)

    checked: set = set()
    pins = _pinned_inputs(computation.constraints, defs)
    inputs_memo: dict = {}
    pin_checks = set(pins.values())
    for proxy, value in computation.constraints:
        b = defs.get(proxy.name)
        key = _check_key(b, value) if b is not None else (proxy.name, value)
        if key in checked or (b is not None and _tautology(b, value)):
            continue  # the same question, asked again by another check (broadcasts ask it often)
        checked.add(key)
        if pins and key not in pin_checks and _inputs_of(proxy, defs, inputs_memo) <= pins.keys():
            continue  # computed from inputs checked equal to their traced values only: true whenever they pass
        emit(proxy)
        prims.check_literal(proxy, value)


def _check_key(b, value) -> tuple:
    """What a constraint on the number ``b`` computes asks: checks asking the same are one."""
    return b.sym.id, tuple(_operand_key(a) for a in b.args), value


def _pinned_inputs(constraints, defs) -> dict:
    """Input ints a constraint checks equal to a constant (``s0 == 1``: a decode step's length), or to a number
    computed from such pinned ints only (``s11 == s0 * 2``): name -> the key of that check. Every other constraint
    computed from pinned inputs alone held when traced with those very values, so it holds whenever the pins do,
    and is not checked again (a decode step's shape checks are mostly such)."""
    pins: dict = {}
    memo: dict = {}
    changed = True
    while changed:
        changed = False
        for proxy, value in constraints:
            b = defs.get(proxy.name)
            if b is None or b.sym.name != "eq" or value is not True or len(b.args) != 2:
                continue
            for x, other in (b.args, tuple(reversed(b.args))):
                # ints only: a float pinned by ``x == 0`` may be -0.0, on which a check of ``1 / x`` differs
                if not isinstance(x, IntegerProxy) or x.name in defs or x.name in pins:
                    continue
                if type(other) is int or isinstance(other, IntegerProxy) and _inputs_of(other, defs, memo) <= pins.keys():
                    pins[x.name] = _check_key(b, value)
                    changed = True
    return pins


def _inputs_of(proxy, defs, memo: dict) -> frozenset:
    """The names of the input numbers ``proxy`` is computed from by arithmetic; where it comes from elsewhere (a
    tensor's data), a name no pin has, so that nothing computed from it counts as implied. ``memo``: name -> the
    answer, shared by the calls on one trace (a number reused by the next, ``n = n + n`` repeated, would be visited
    once per path to it: exponential in the chain's length). Iterative: a chain may be longer than the recursion
    limit."""
    stack = [proxy]
    while stack:
        p = stack[-1]
        if p.name in memo:
            stack.pop()
            continue
        b = defs.get(p.name)
        if b is None:
            memo[p.name] = frozenset((p.name,))
        elif b.sym.name not in prims.number_functions or any(not isinstance(a, NumberProxy)
                                                                for a in b.flat_proxy_args):
            memo[p.name] = frozenset((f"<{p.name} not computed from numbers>",))
        else:
            pending = [a for a in b.flat_proxy_args if a.name not in memo]
            if pending:
                stack.extend(pending)
                continue
            memo[p.name] = frozenset().union(*(memo[a.name] for a in b.flat_proxy_args))
        stack.pop()
    return memo[proxy.name]


def _hoist_number_checks(bsyms: list, start: int) -> None:
    """Moves each number check (``bsyms[start:]``, arithmetic on ints and comparisons) to just after the
    numbers it reads are unpacked and type-checked. The checks are a conjunction with no side effects, so their
    order does not change what the prologue accepts; a call that differs in a size (prefill against decode)
    is then turned away by the first lines instead of after every structural check of a large module."""
    ready: dict = {}  # number name -> index in the structural part after which it may be read
    for i, b in enumerate(bsyms[:start]):
        for o in b.flat_proxy_outs:
            if isinstance(o, NumberProxy):
                ready[o.name] = i
        if b.sym.name == "check_type" and isinstance(b.args[0], NumberProxy):
            ready[b.args[0].name] = max(ready.get(b.args[0].name, i), i)  # comparisons come after the type check
    after: dict = {}  # structural index -> the number checks placed after it, in their order
    for b in bsyms[start:]:
        position = max((ready.get(a.name, start - 1) for a in b.flat_proxy_args if isinstance(a, NumberProxy)),
                       default=start - 1)
        for o in b.flat_proxy_outs:
            if isinstance(o, NumberProxy):
                ready[o.name] = position
        after.setdefault(position, []).append(b)
    ordered = []
    for i, b in enumerate(bsyms[:start]):
        ordered.append(b)
        ordered.extend(after.pop(i, ()))
    for rest in after.values():
        ordered.extend(rest)
    bsyms[:] = ordered


def _operand_key(a):
    return ("proxy", a.name) if isinstance(a, NumberProxy) else ("value", type(a).__name__, a)


def _tautology(bsym, value) -> bool:
    """``s0 == s0`` is True whatever s0 is."""
    if len(bsym.args) != 2 or not all(isinstance(a, NumberProxy) for a in bsym.args):
        return False
    same = bsym.args[0].name == bsym.args[1].name
    return same and (bsym.sym.name in ("eq", "le", "ge") and value is True or bsym.sym.name in ("ne", "lt", "gt")
                     and value is False)


_devices: dict = {}


def _torch_device(device):
    # one torch.device object per device, so prologues compare against a constant
    if device not in _devices:
        _devices[device] = device.to_torch()
    return _devices[device]


def _ref_name(obj) -> str:
    # an object without a name of its own (a torch.Generator) is named by its type in lower case: ``g is Generator``
    # would read as a test of the class
    name = getattr(obj, "__name__", None) or type(obj).__name__.lower()
    return re.sub(r"\W+", "_", name).strip("_") or "obj"


