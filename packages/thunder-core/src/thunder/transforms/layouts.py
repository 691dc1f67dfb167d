"""Memory layouts, where the program's meaning depends on them. One model serves every such question.

Traces carry no strides, yet some answers in eager PyTorch depend on them: ``x.t().view(-1)`` raises,
``x.stride()`` and ``x.is_contiguous()`` are numbers the program may compute with, ``reshape``/``flatten``/
``reshape_as``/``contiguous`` return a view or a copy, an opaque call's result may share memory with its
arguments, a write through an expanded view may touch one element many times.

While the jit interprets the program it keeps, for each tensor whose strides it can know (an input, and what the
program computes from such tensors), a stand-in on the ``meta`` device with eager's sizes and strides, made by
running the same torch call on the stand-ins of its arguments: PyTorch itself computes the strides (an
elementwise op keeps a transposed layout) and raises its own errors. A call PyTorch cannot run on ``meta`` gives
results of unknown layout, which the trace treats as contiguous; so do other ops of contiguous tensors, decided
without meta kernels (see on_record). After tracing, functionalization asks the same model whether a view-or-copy
op aliased or what strides a view has, only when an in-place update makes it matter; a tensor without a stand-in
is then replayed from the op that made it (``meta``), on meta tensors, as eager would have run it.

A question answered from the model makes the layout of the inputs it came from part of what the compiled program
assumed (``assumed``): the prologue checks that they are contiguous again, or have the same strides. Only such
inputs get a check; a program that asks nothing about strides checks none. Under symbolic values the sizes the
answer came from are constrained too: their values where the program computes with strides, else which of them are 0
or 1 (the dims whose strides PyTorch ignores), as PyTorch's symbolic shapes specialize 0 and 1.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes
from thunder.core.devices import Device
from thunder.core.proxies import NumberProxy, Proxy, TensorProxy, pyval
from thunder.core.pytree import tree_flatten, tree_map, tree_unflatten
from thunder.core.shapes import as_ints
from thunder.core.symbol import BoundSymbol

__all__ = ["Layouts", "MAYBE_VIEWS", "torch_results"]

# torch-language symbols that return a view when the strides allow it and a copy otherwise
MAYBE_VIEWS = frozenset({"ltorch.reshape", "ltorch.reshape_as", "ltorch.flatten", "ltorch.contiguous"})

# symbol id -> the torch call it records, taking the same arguments: run on the stand-ins it gives the strides
# of the results (views keep their base's layout in their own way; PyTorch knows how)
_VIEWS = {
    "ltorch.view": torch.Tensor.view, "ltorch.view_as": torch.Tensor.view_as, "ltorch.reshape": torch.Tensor.reshape,
    "ltorch.reshape_as": torch.Tensor.reshape_as, "ltorch.flatten": torch.flatten, "ltorch.unflatten": torch.unflatten,
    "ltorch.permute": torch.Tensor.permute, "ltorch.transpose": torch.transpose, "ltorch.t": torch.t,
    "ltorch.unsqueeze": torch.unsqueeze, "ltorch.squeeze": torch.squeeze, "ltorch.expand": torch.Tensor.expand,
    "ltorch.expand_as": torch.Tensor.expand_as, "ltorch.broadcast_to": torch.broadcast_to, "ltorch.split": torch.split,
    "ltorch.chunk": torch.chunk, "ltorch.tensor_split": torch.tensor_split, "ltorch.movedim": torch.movedim,
    "ltorch.select": torch.select, "ltorch.narrow": torch.narrow, "ltorch.unbind": torch.unbind,
    "ltorch.diagonal": torch.diagonal, "ltorch.as_strided": torch.as_strided, "ltorch.detach": torch.Tensor.detach,
    "ltorch.data": torch.Tensor.detach,
    "ltorch.getitem": torch.Tensor.__getitem__, "ltorch.contiguous": torch.Tensor.contiguous,
}

def torch_results(result) -> list:
    """The tensors a torch call returned, in order (``torch.return_types`` are tuples thunder's pytrees keep whole)."""
    return [t for t in tree_flatten(tuple(result) if isinstance(result, tuple) else result)[0]
            if isinstance(t, torch.Tensor)]


def _column_major(out: TensorProxy) -> torch.Tensor:
    shape = tuple(pyval(d) for d in out.shape)
    strides, step = [], 1
    for d in shape:
        strides.append(step)
        step *= d
    return torch.empty_strided(shape, tuple(strides), dtype=dtypes.to_torch_dtype(out.dtype), device="meta")


# symbol id -> the stand-in of its result, for ops whose layout in eager no meta kernel gives (the symbol stands
# for a call that reads tensor data, and the op thunder runs lays out its result otherwise)
_RESULT_LAYOUTS = {"ltorch.nonzero_sized": _column_major,  # torch.nonzero, torch.argwhere
                   "ltorch.nonzero_counted": _column_major}
# the views whose success depends on the strides (the others always succeed once their meta accepted the shapes)
_STRIDE_CHECKED = {"ltorch.view", "ltorch.view_as"}


def _torch_calls() -> dict:
    """symbol id -> the torch callable eager runs for the symbol (they take the same arguments)."""
    from thunder.core.proxies import torch_function_table
    from thunder.core.symbol import Symbol

    calls: dict = {}
    for fn, sym in torch_function_table.items():
        if isinstance(sym, Symbol):
            calls.setdefault(sym.id, fn)
    calls.update(_VIEWS)
    calls.update(_CALLS_OF_METHODS)
    return calls


# symbols reached by a reflected operator (``0.5 - x``) or whose torch function is a wrapper: the torch callable taking
# the symbol's arguments (the layout of their results is known then, as for ``x - 0.5``)
_CALLS_OF_METHODS = {
    "ltorch.rsub": torch.Tensor.__rsub__, "ltorch.rpow": torch.Tensor.__rpow__, "ltorch.rmod": torch.Tensor.__rmod__,
    "ltorch.rfloordiv": torch.Tensor.__rfloordiv__, "ltorch.rlshift": torch.Tensor.__rlshift__,
    "ltorch.rrshift": torch.Tensor.__rrshift__, "ltorch.silu": torch.nn.functional.silu, "ltorch.where": torch.where,
}


_CALLS: dict = {}


def _table_call(sym_id: str):
    if not _CALLS:
        _CALLS.update(_torch_calls())
    return _CALLS.get(sym_id)


def torch_argument(x, device: str = "meta"):
    """A non-tensor argument of a symbol as the torch call on stand-ins on ``device`` takes it."""
    if isinstance(x, NumberProxy):
        return pyval(x)
    if isinstance(x, dtypes.dtype):
        return dtypes.to_torch_dtype(x)
    if isinstance(x, Device):
        return torch.device(device)
    return x


def _region(standin: torch.Tensor, key):
    """``standin[key]`` for a basic index (ints, slices, ``...``, None), or None where eager's indexing fails (its
    error comes when the write is traced)."""
    keys = key if isinstance(key, tuple) else (key,)
    try:
        return standin[tuple(slice(*(torch_argument(b) for b in (k.start, k.stop, k.step))) if isinstance(k, slice)
                             else torch_argument(k) for k in keys)]
    except Exception:  # noqa: BLE001
        return None


def _shares_elements(t: torch.Tensor) -> bool:
    return any(st == 0 and n > 1 for n, st in zip(t.shape, t.stride()))


def _eager_call(bsym: BoundSymbol):
    """The torch callable eager runs for ``bsym``: the torch function the symbol stands for, else (an opaque
    call) the one the torch executor runs. None: not known."""
    fn = _table_call(bsym.sym.id)
    if fn is not None:
        return fn
    from thunder.extend import get_executor

    impl = get_executor("torch").implmap.get(bsym.sym.id)
    op = impl.symbol if impl is not None else None
    if op is None:
        return None
    if op.call_ctx:
        return next(iter(op.call_ctx.values()))
    obj = __import__(op.module)
    for part in op.module.split(".")[1:] + op.name.split("."):
        obj = getattr(obj, part)
    return obj


def _with_objects(bsym: BoundSymbol, moved: dict) -> BoundSymbol:
    """``bsym`` with each proxy whose id is a key of ``moved`` replaced by its value."""
    def sub(tree):
        return tree_map(lambda x: moved.get(id(x), x) if isinstance(x, Proxy) else x, tree)

    return bsym.replace(args=sub(bsym.args), kwargs=sub(bsym.kwargs), output=sub(bsym.output))


def _root(t: torch.Tensor) -> torch.Tensor:
    return t._base if t._is_view() else t


def _contiguous_standin(p: TensorProxy) -> torch.Tensor:
    return torch.empty(tuple(pyval(d) for d in p.shape), dtype=dtypes.to_torch_dtype(p.dtype), device="meta")


def _is_elementwise(bsym) -> bool:
    return getattr(bsym.sym.meta, "__module__", None) == "thunder.torch.elementwise"


class Layouts:
    def __init__(self):
        self._known: dict[int, tuple] = {}  # id(proxy) -> (proxy, meta stand-in, names of the inputs it comes from)
        # input name -> what the program's meaning depended on: "contiguous" (a contiguous input, whatever its
        # sizes: symbolic shapes keep one entry) or the exact strides of a non-contiguous one
        self.assumed: dict[str, object] = {}
        self._input_layouts: dict[str, object] = {}
        self.input_strides: dict[str, tuple] = {}
        # input name -> {method: its answer} the program relied on besides strides (``storage_offset``: a view's
        # offset is computed from its input's; ``is_inference``: a view of an inference tensor is one)
        self.assumed_facts: dict[str, dict] = {}
        self._input_facts: dict[str, dict] = {}
        # after tracing (replay_from): the trace asked about, the ops that made its tensors, replayed results
        self._trace = None
        self._producers: dict[str, BoundSymbol] = {}
        self._replayed: dict[str, torch.Tensor] = {}  # tensor name -> its meta tensor
        self._runs: dict[int, object] = {}  # id(bound symbol) -> what it returned on meta tensors
        self._checkable = None  # names of the numbers the constrained trace has, when it is not the replayed one
        self._guessed: dict[int, tuple] = {}  # id(proxy) -> (proxy, stand-in) where the layout is not known
        self._made_by: dict[int, tuple] = {}  # id(proxy) -> (proxy, bound symbol) where the layout is not known
        self._sizes: dict[str, NumberProxy] = {}  # name -> a symbolic size that known layouts depend on
        self._input_dims: dict[str, tuple] = {}  # input name -> its sizes
        self._degenerate_checked: set[str] = set()  # sizes whose being 0 or 1 is a constraint already

    def add_input(self, proxy: TensorProxy, tensor: torch.Tensor) -> None:
        if tensor.layout is not torch.strided or tensor.is_nested:
            return
        offset = tensor.storage_offset()
        # an inference tensor's stand-in is one too: PyTorch then tells which tensors made from it are (its views)
        with torch.inference_mode(tensor.is_inference()):
            standin = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device="meta")
            if offset:  # the same layout at the same place in a longer buffer
                extent = standin.untyped_storage().nbytes() // tensor.element_size()
                standin = torch.empty(offset + extent, dtype=tensor.dtype, device="meta").as_strided(
                    tensor.shape, tensor.stride(), offset)
        self._input_facts[proxy.name] = {"storage_offset": offset, "is_inference": tensor.is_inference()}
        self._known[id(proxy)] = (proxy, standin, frozenset((proxy.name,)))
        self._input_dims[proxy.name] = tuple(proxy.shape)
        self.input_strides[proxy.name] = tuple(tensor.stride())
        self._input_layouts[proxy.name] = "contiguous" if tensor.is_contiguous() else self.input_strides[proxy.name]

    def rebind(self, old: TensorProxy, proxy: TensorProxy, value: TensorProxy) -> None:
        """``proxy`` stands for ``value`` from now on and ``old`` for what it was (TraceCtx.rebind)."""
        for table in (self._known, self._guessed, self._made_by):
            for src, dst in ((proxy, old), (value, proxy)):
                entry = table.pop(id(src), None)
                if entry is not None and entry[0] is src:
                    table[id(dst)] = (dst, *entry[1:])
        # the ops kept for replay read and made the proxies as they were recorded: ``x.swapdims_(0, 1)`` recorded
        # ``value = transpose(proxy)``, which would now read itself (endless replay)
        moved = {id(proxy): old, id(value): proxy}
        for key, (p, b) in self._made_by.items():
            self._made_by[key] = (p, _with_objects(b, moved))

    def _entry(self, proxy):
        entry = self._known.get(id(proxy))
        return entry if entry is not None and entry[0] is proxy else None

    def rely_on(self, inputs, exact: bool = False) -> None:
        """The program's meaning depends on the layout of these inputs (``exact``: on their very strides), or of
        tensors these symbolic sizes lay out (``torch.nonzero``'s row count is its column stride, a created tensor's
        sizes). Under symbolic values the answer depends on the sizes as well: on their values where it is a number
        the program computes with (``exact``), else on which of them are 0 or 1, whose strides PyTorch ignores
        (``x.mT.view(-1)`` works for one row only)."""
        for name in inputs:
            if name in self._sizes:
                self._rely_on_size(self._sizes[name], exact)
                continue
            self.assumed[name] = self.input_strides[name] if exact else self._input_layouts[name]
            for d in self._input_dims.get(name, ()):
                self._rely_on_size(d, exact)

    def _rely_on_size(self, d, exact: bool) -> None:
        """A constraint of the trace on the symbolic size ``d``: another call where it differs gets its own entry."""
        if not isinstance(d, NumberProxy) or d.static:
            return
        if self._trace is not None:  # after tracing (functionalization's questions): the traced program's constraint
            self._constrain(d)
        elif exact:
            int(d)
        elif d.name not in self._degenerate_checked:
            self._degenerate_checked.add(d.name)
            for v in (0, 1):
                bool(d == v)

    def _asked(self, proxy: TensorProxy, replay: bool = True) -> tuple | None:
        """(the stand-in, the names it depends on) for a question about ``proxy``'s layout; a tensor of unknown
        layout is replayed from the ops that made it where ``replay`` (None: unknown, or that cannot be done)."""
        entry = self._entry(proxy)
        if entry is not None:
            return entry[1], entry[2]
        if not replay:
            return None
        inputs: set = set()
        standin = self._replayed_standin(proxy, inputs)
        return None if isinstance(standin, TensorProxy) else (standin, inputs)

    def strides(self, proxy: TensorProxy) -> tuple | None:
        """Eager's ``proxy.stride()`` (None: not known). The program may compute with the numbers: the strides of
        the inputs they come from are checked exactly."""
        asked = self._asked(proxy)
        if asked is None:
            return None
        self.rely_on(asked[1], exact=True)
        return tuple(asked[0].stride())

    def storage_offset(self, proxy: TensorProxy) -> int | None:
        """Eager's ``proxy.storage_offset()`` (None: not known): from the strides and offsets of the inputs it comes
        from, which are checked exactly."""
        asked = self._asked(proxy)
        if asked is None:
            return None
        self.rely_on(asked[1], exact=True)
        self._rely_on_fact(asked[1], "storage_offset")
        return asked[0].storage_offset()

    def dim_order(self, proxy: TensorProxy, **kwargs) -> tuple | None:
        """Eager's ``proxy.dim_order()`` (None: not known), from the strides (checked exactly); eager's error for an
        ambiguous order where ``ambiguity_check`` asks for it."""
        asked = self._asked(proxy)
        if asked is None:
            return None
        self.rely_on(asked[1], exact=True)
        return asked[0].dim_order(**kwargs)

    def is_inference(self, proxy: TensorProxy) -> bool | None:
        """Eager's ``proxy.is_inference()`` (None: not known): a tensor the program made inside
        ``torch.inference_mode()`` (entered for real while tracing) and a view of an inference tensor are. Only
        stand-ins made while tracing answer (a replay would run outside the program's inference regions): known
        ones, and guessed ones where no input is an inference tensor (an opaque call might return a view of one)."""
        asked = self._asked(proxy, replay=False)
        if asked is not None:
            self._rely_on_fact(asked[1], "is_inference")
            return asked[0].is_inference()
        guessed = self._guessed.get(id(proxy))
        if guessed is None or guessed[0] is not proxy or any(f["is_inference"] for f in self._input_facts.values()):
            return None
        self._rely_on_fact(self._input_facts, "is_inference")
        return guessed[1].is_inference()

    def _rely_on_fact(self, inputs, name: str) -> None:
        for i in inputs:
            if i in self._input_facts:  # (not a symbolic size)
                self.assumed_facts.setdefault(i, {})[name] = self._input_facts[i][name]

    def is_contiguous(self, proxy: TensorProxy, replay: bool = True) -> bool | None:
        """Whether ``proxy`` is contiguous in eager (None: not known, the trace treats it as contiguous). Without
        ``replay`` a tensor of unknown layout is not replayed (the first meta kernel costs seconds): for questions
        whose answer None is also right, only slower (``contiguous()`` is a copy op then)."""
        asked = self._asked(proxy, replay)
        if asked is None:
            return None
        self.rely_on(asked[1])
        return asked[0].is_contiguous()

    def last_stride_is_one(self, proxy: TensorProxy) -> bool | None:
        """Whether eager's tensor has stride 1 in its last dimension, as eager's choice of an attention kernel asks
        (None: not known). From the known layout (the inputs' layouts it follows from become checks of the
        prologue), else from the contiguous guess carried through views: asked by an executor choosing between
        kernels that both compute the right values, where a wrong guess costs only a copy."""
        asked = self._asked(proxy, replay=False)
        if asked is not None:
            self.rely_on(asked[1])
            standin = asked[0]
        else:
            guessed = self._guessed.get(id(proxy))
            if guessed is None or guessed[0] is not proxy:
                return None
            standin = guessed[1]
        return standin.ndim == 0 or standin.stride(-1) == 1

    def is_memory_of(self, value: TensorProxy, target: TensorProxy, key) -> bool:
        """Whether ``value`` is exactly the memory ``target[key]`` covers (same storage, offset, sizes, strides,
        dtype) and several of those elements share memory (``v[-1] = v[0]`` of an expanded ``v`` with one row):
        eager's copy returns early there, where a functional write would refuse the overlap. Elsewhere the write
        is recorded as usual (it bumps the version, as eager's does). ``key``: a basic index (ints, slices, ``...``,
        None)."""
        # shared elements come from an expand, whatever the strides of what it expands: the guessed layouts (no
        # meta kernel run) tell which writes can be such a copy; only those replay the real strides (seconds for
        # the first meta kernel of a process)
        guessed = _region(self._guessed_standin(target), key)
        if guessed is None or not _shares_elements(guessed) or list(guessed.shape) != as_ints(value.shape):
            return False
        asked_value, asked_target = self._asked(value), self._asked(target)
        if asked_value is None or asked_target is None:
            return False
        region = _region(asked_target[0], key)
        if region is None:
            return False
        v = asked_value[0]
        same = (v.untyped_storage()._cdata == region.untyped_storage()._cdata and v.dtype == region.dtype
                and _shares_elements(region)
                and (tuple(v.shape), tuple(v.stride()), v.storage_offset())
                == (tuple(region.shape), tuple(region.stride()), region.storage_offset()))
        if same:
            self.rely_on(asked_value[1] | asked_target[1], exact=True)
        return same

    def is_contiguous_for_every_call(self, proxy: TensorProxy) -> bool:
        """Whether ``proxy`` is contiguous in eager, asked where the answer gives the program the tensor itself
        (``contiguous()``). A view of symbolic sizes may be contiguous for one row only (``x[1:-1:2].mT``): which of
        its own sizes are 0 or 1 is checked too, as for the inputs' sizes (``rely_on``)."""
        if not self.is_contiguous(proxy, replay=False):
            return False
        for d in proxy.shape:
            self._rely_on_size(d, exact=False)
        return True

    def on_record(self, bsym) -> None:
        """After the program called ``bsym``: the stand-ins of its results, and eager's error for a view that
        the strides do not allow or for an in-place write into memory that overlaps."""
        self._record_known(bsym)
        self._record_guesses(bsym)

    def _record_guesses(self, bsym) -> None:
        """Stand-ins for results of unknown layout, guessed contiguous (as the trace treats them) and carried
        through views: never answers to the program (stride(), is_contiguous()), only for eager's overlap errors,
        which do not depend on the guess (an expanded view overlaps whatever the strides of its base)."""
        tensor_args = [x for x in bsym.flat_proxy_args if isinstance(x, TensorProxy)]
        unknown_args = any(self._entry(x) is None for x in tensor_args)
        outs = [o for o in bsym.flat_proxy_outs if isinstance(o, TensorProxy)]
        inplace = "inplace" in bsym.sym.tags
        for o in outs:
            if self._entry(o) is None and not inplace:  # an in-place op returns its target, made before
                self._made_by[id(o)] = (o, bsym)
        if not (unknown_args if inplace else any(self._entry(o) is None for o in outs)):
            return
        fn = _table_call(bsym.sym.id)
        if fn is not None and tensor_args and unknown_args and (inplace or bsym.sym.id in _VIEWS):
            args, kwargs = tree_map(self._guessed_standin, (bsym.args, bsym.kwargs))
            if not any(isinstance(x, torch.Tensor) and x.device.type != "meta" for x in tree_flatten((args, kwargs))[0]):
                if inplace:
                    if isinstance(args[0], torch.Tensor):
                        try:
                            self._check_overlapping_write(fn, args, kwargs, set())
                        except RuntimeError as guessed:
                            self._check_overlapping_write_by_replay(fn, bsym, guessed)
                        if args[0].numel() == 0:  # eager's error names the real storage: replayed
                            inputs: set = set()
                            replayed = tree_map(lambda x: self._replayed_standin(x, inputs), (bsym.args, bsym.kwargs))
                            if not any(isinstance(x, TensorProxy) for x in tree_flatten(replayed)[0]):
                                self._check_write_into_empty(fn, bsym, replayed, inputs)
                    return
                try:
                    metas = torch_results(fn(*args, **kwargs))
                except Exception:
                    metas = []
                if len(metas) == len(outs):
                    for o, m in zip(outs, metas):
                        self._guessed[id(o)] = (o, m)
                    return
        rule = _RESULT_LAYOUTS.get(bsym.sym.id, _contiguous_standin)
        for o in outs:
            if self._entry(o) is None:
                self._guessed[id(o)] = (o, rule(o))

    def _check_view_by_replay(self, fn, bsym) -> None:
        """A view of a tensor of unknown layout: tried on the contiguous guess, it almost always succeeds, and
        then so does eager. Where the guess fails, the real strides decide: the tensors of unknown layout are
        replayed on meta tensors from the ops that made them (slow the first time, hence only here), and
        eager's error, if eager fails too, is the program's."""
        args, kwargs = tree_map(self._guessed_standin, (bsym.args, bsym.kwargs))
        try:
            fn(*args, **kwargs)
            return
        except Exception:
            pass
        inputs: set = set()
        args, kwargs = tree_map(lambda x: self._replayed_standin(x, inputs), (bsym.args, bsym.kwargs))
        if any(isinstance(x, TensorProxy) for x in tree_flatten((args, kwargs))[0]):
            return  # not replayable: the view stays unchecked
        try:
            fn(*args, **kwargs)
        except RuntimeError:
            self.rely_on(inputs)
            raise

    def _check_overlapping_write_by_replay(self, fn, bsym, guessed: RuntimeError) -> None:
        """An in-place write that fails eager's overlap check on the guessed layouts: whether two tensors partially
        overlap in eager depends on their strides (eager checks only dense ones), so the real strides decide where
        the tensors of unknown layout can be replayed; elsewhere the guess's error stands."""
        inputs: set = set()
        args, kwargs = tree_map(lambda x: self._replayed_standin(x, inputs), (bsym.args, bsym.kwargs))
        if any(isinstance(x, TensorProxy) for x in tree_flatten((args, kwargs))[0]):
            raise guessed  # not replayable: the error of the guessed layouts stands
        self._check_overlapping_write(fn, args, kwargs, inputs)

    def _replayed_standin(self, x, inputs: set):
        """The stand-in of ``x`` with eager's strides, replaying the ops that made it where it is not known; ``x``
        itself where that cannot be done."""
        if not isinstance(x, TensorProxy):
            return torch_argument(x)
        entry = self._entry(x)
        if entry is not None:
            inputs.update(entry[2])
            return entry[1]
        made = self._made_by.get(id(x))
        if made is None or made[0] is not x:
            return x
        b = made[1]
        rule = _RESULT_LAYOUTS.get(b.sym.id)
        if rule is not None:
            sizes = self._sizes_of(x)
            inputs.update(sizes)
            self._known[id(x)] = (x, rule(x), frozenset(sizes))
            return self._entry(x)[1]
        fn = _eager_call(b)
        if fn is None:
            return x
        args, kwargs = tree_map(lambda y: self._replayed_standin(y, inputs), (b.args, b.kwargs))
        if any(isinstance(y, TensorProxy) or (isinstance(y, torch.Tensor) and y.device.type != "meta")
               for y in tree_flatten((args, kwargs))[0]):
            return x
        try:
            metas = torch_results(fn(*args, **kwargs))
        except Exception:
            return x
        outs = [o for o in b.flat_proxy_outs if isinstance(o, TensorProxy)]
        if len(metas) != len(outs):
            return x
        for o, m in zip(outs, metas):
            self._known[id(o)] = (o, m, frozenset(inputs))
        return self._entry(x)[1]

    def _sizes_of(self, p: TensorProxy) -> set:
        """The names of ``p``'s symbolic sizes, which its layout depends on (a tensor made from sizes, not inputs)."""
        sizes = {d.name: d for d in p.shape if isinstance(d, NumberProxy) and not d.static}
        self._sizes.update(sizes)
        return set(sizes)

    def _guessed_standin(self, x):
        if isinstance(x, TensorProxy):
            entry = self._entry(x) or self._guessed.get(id(x))
            if entry is None or entry[0] is not x:
                entry = self._guessed[id(x)] = (x, _contiguous_standin(x))
            return entry[1]
        return pyval(x) if isinstance(x, NumberProxy) else x

    def _record_known(self, bsym) -> None:
        if not any(isinstance(x, TensorProxy) for x in bsym.flat_proxy_args):
            if "strided" not in bsym.sym.id:  # creation ops (zeros, arange, tensor(...)) make contiguous tensors
                for out in bsym.flat_proxy_outs:
                    if isinstance(out, TensorProxy):
                        standin = torch.empty(tuple(pyval(d) for d in out.shape), dtype=dtypes.to_torch_dtype(out.dtype),
                                              device="meta")
                        self._known[id(out)] = (out, standin, frozenset(self._sizes_of(out)))
            return
        fn = _table_call(bsym.sym.id)
        if fn is None:
            return
        inputs: set = set()
        missing = []

        def standin(x):
            if isinstance(x, TensorProxy):
                entry = self._entry(x)
                if entry is None:
                    missing.append(x)
                    return x
                inputs.update(entry[2])
                return entry[1]
            if isinstance(x, NumberProxy):
                return pyval(x)
            return x

        args, kwargs = tree_map(standin, (bsym.args, bsym.kwargs))
        if missing and bsym.sym.id in _STRIDE_CHECKED:
            self._check_view_by_replay(fn, bsym)
        if missing or any(isinstance(x, torch.Tensor) and x.device.type != "meta"
                                        for x in tree_flatten((args, kwargs))[0]):
            return  # an argument of unknown layout (or an index tensor): its results are of unknown layout
        if "inplace" in bsym.sym.tags:
            if args and isinstance(args[0], torch.Tensor):
                self._check_overlapping_write(fn, args, kwargs, inputs)
                if args[0].numel() == 0:
                    self._check_write_into_empty(fn, bsym, (args, kwargs), inputs)
            return  # the result is the updated tensor itself, whose layout is known
        if bsym.sym.id not in _VIEWS and self._all_contiguous(args, kwargs):
            # The common case, decided without running a meta kernel (the first non-view meta kernel imports
            # PyTorch's Python meta registrations, seconds): an elementwise op of contiguous tensors of its own
            # shape is contiguous; other ops of contiguous tensors have unknown layout (some return transposed
            # results, e.g. linalg), which the trace treats as contiguous as before.
            if _is_elementwise(bsym) and self._same_shape_outputs(bsym, args, kwargs):
                for out in bsym.flat_proxy_outs:
                    if isinstance(out, TensorProxy):
                        standin = torch.empty(tuple(pyval(d) for d in out.shape), dtype=dtypes.to_torch_dtype(out.dtype),
                                              device="meta")
                        self._known[id(out)] = (out, standin, frozenset(inputs))
            return
        try:
            result = fn(*args, **kwargs)
        except RuntimeError:
            if bsym.sym.id in _STRIDE_CHECKED:
                self.rely_on(inputs)  # a view these strides do not allow: eager fails here, for such strides only
                raise
            return  # thunder's meta accepted it; PyTorch's meta kernel cannot say: the layout stays unknown
        except Exception:  # no meta kernel (NotImplementedError), a Python-level refusal: unknown layout
            return
        if bsym.sym.id in _STRIDE_CHECKED:
            self.rely_on(inputs)
        outs = [o for o in bsym.flat_proxy_outs if isinstance(o, TensorProxy)]
        metas = torch_results(result)
        if len(outs) == len(metas):
            for o, m in zip(outs, metas):
                self._known[id(o)] = (o, m, frozenset(inputs))

    @staticmethod
    def _all_contiguous(args, kwargs) -> bool:
        return all(x.is_contiguous() for x in tree_flatten((args, kwargs))[0] if isinstance(x, torch.Tensor))

    @staticmethod
    def _same_shape_outputs(bsym, args, kwargs) -> bool:
        outs = [o for o in bsym.flat_proxy_outs if isinstance(o, TensorProxy)]
        shapes = {tuple(pyval(d) for d in o.shape) for o in outs}
        return len(shapes) == 1 and all(tuple(x.shape) in shapes or x.numel() <= 1
                                        for x in tree_flatten((args, kwargs))[0] if isinstance(x, torch.Tensor))

    def _check_write_into_empty(self, fn, bsym, standins, inputs) -> None:
        """An in-place write into an empty tensor writes nothing, yet eager may fail: ``index_fill_`` with an index
        into a dimension of size 0 fails inside its restride, with a message naming the tensor's storage offset and
        size. The call runs on an empty tensor of the same layout and storage size, with the values of the constant
        tensors among its arguments (indices made by ``torch.tensor``); eager's error, if any, is the program's.
        Not checked where another tensor argument's values are not known."""
        from thunder.core.trace import get_tracectx

        constants = getattr(get_tracectx(), "constant_indices", None)
        proxies = tree_flatten((bsym.args, bsym.kwargs))[0]
        leaves, spec = tree_flatten(standins)
        if constants is None or len(proxies) != len(leaves):
            return
        target = leaves[0]
        memory = torch.zeros(target.untyped_storage().nbytes(), dtype=torch.uint8).untyped_storage()
        real = [torch.empty(0, dtype=target.dtype).set_(memory, target.storage_offset(), target.shape, target.stride())]
        for p, leaf in zip(proxies[1:], leaves[1:]):
            if isinstance(p, TensorProxy):
                leaf = constants._constant(p)
                if leaf is None:
                    return
            real.append(leaf)
        args, kwargs = tree_unflatten(real, spec)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # eager's deprecation warnings come when the program runs
            try:
                fn(*args, **kwargs)
            except (RuntimeError, IndexError):
                self.rely_on(inputs)
                raise

    def _check_overlapping_write(self, fn, args, kwargs, inputs) -> None:
        """An in-place update of a tensor whose elements share memory (an expanded view), or that reads a tensor
        sharing memory with it (``x[idx] = x[1:]``): some such writes fail in eager, others do not (``fill_``,
        a write to one row, a copy between parts that do not overlap). Meta kernels do not check, so the call is
        run on small real tensors with the same layouts, the ones sharing memory on one buffer, and eager's
        error, if any, is the program's."""
        target = args[0]
        storage = target.untyped_storage()._cdata
        shares = [x for x in tree_flatten((args, kwargs))[0]
                  if isinstance(x, torch.Tensor) and x.untyped_storage()._cdata == storage]
        if target.numel() == 0 or (torch._debug_has_internal_overlap(target) != 1 and len(shares) < 2):
            return  # an empty target writes nothing, so nothing can overlap
        self.rely_on(inputs)
        extent = max(x.storage_offset() + sum((n - 1) * st for n, st in zip(x.shape, x.stride())) + 1
                     for x in shares if x.numel())
        buffer = torch.zeros(extent, dtype=target.dtype)

        def real(x):
            if any(x is y for y in shares):
                return buffer.view(x.dtype).as_strided(x.shape, x.stride(), x.storage_offset()) \
                    if x.dtype.itemsize == target.dtype.itemsize else torch.zeros(x.shape, dtype=x.dtype)
            if isinstance(x, torch.Tensor):
                return torch.zeros(x.shape, dtype=x.dtype)
            return x

        real_args, real_kwargs = tree_map(real, (args, kwargs))
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # eager's deprecation warnings come when the program runs
            try:
                fn(*real_args, **real_kwargs)
            except RuntimeError as e:
                if "to a single memory location" in str(e):
                    raise

    # after tracing: functionalization's questions ---------------------------------------------------------
    def replay_from(self, trace, constrain=None) -> "Layouts":
        """Ready to answer about ``trace``'s tensors; the ones without a stand-in are replayed from the ops that
        made them (symbolic numbers read on the way are constrained in ``constrain``, ``trace`` where None: the
        trace whose constraints the prologue checks)."""
        self._trace, self._producers, self._replayed, self._runs = constrain or trace, {}, {}, {}
        self._checkable = None if constrain is None or constrain is trace else _number_names(constrain)
        for b in trace.bound_symbols:
            if "inplace" in b.sym.tags:  # an in-place op keeps its target's layout
                continue
            for o in b.flat_proxy_outs:
                self._producers.setdefault(o.name, b)
        return self

    def _value(self, x):
        if isinstance(x, NumberProxy):
            if not x.static:
                self._constrain(x)
            return x.value
        return x

    def _constrain(self, x: NumberProxy) -> None:
        """The checked trace's constraint on ``x``; for a number a later trace made, which the prologue cannot
        compute, the sizes and numbers the call came with are pinned instead (fuzz 631748, a NameError in the
        prologue)."""
        if self._checkable is not None and x.name not in self._checkable:
            for n in _input_numbers(self._trace):
                self._trace.add_constraint(n, n.value)
        else:
            self._trace.add_constraint(x, x.value)

    def _shape(self, p: TensorProxy) -> tuple:
        return tuple(int(self._value(d)) for d in p.shape)

    def meta(self, p: TensorProxy) -> torch.Tensor:
        """A meta tensor with eager's sizes and strides for ``p`` (contiguous where they cannot be known)."""
        if p.name in self.input_strides and self._entry(p) is not None:
            self._shape(p)  # its sizes too, under symbolic values
            self.rely_on((p.name,), exact=True)
            return self._entry(p)[1]
        # Other tensors are replayed even when they have a stand-in: the replay constrains the symbolic numbers it
        # reads (``x[:, :n].reshape(-1)`` is a view for n == 1 only), the stand-ins were made with their values.
        m = self._replayed.get(p.name)
        if m is None:
            b = self._producers.get(p.name)
            outs = self._run(b) if b is not None else None
            m = next((o for o, q in zip(tree_flatten(outs)[0], b.flat_outs) if isinstance(q, Proxy) and q.name == p.name
                      and isinstance(o, torch.Tensor)), None) if outs is not None else None
            if m is None or tuple(m.shape) != self._shape(p):
                m = torch.empty(self._shape(p), dtype=dtypes.to_torch_dtype(p.dtype), device="meta")
            self._replayed[p.name] = m
        return m

    def _run(self, bsym: BoundSymbol):
        key = id(bsym)
        if key in self._runs:
            return self._runs[key]
        fn = _eager_call(bsym)
        out = None
        if fn is not None and any(isinstance(a, TensorProxy) for a in bsym.flat_args):
            def convert(x):
                if isinstance(x, TensorProxy):
                    return self.meta(x)
                if isinstance(x, NumberProxy):
                    return self._value(x)
                if isinstance(x, slice):  # indexing keys: their bounds may be symbolic numbers
                    return slice(*(self._value(v) for v in (x.start, x.stop, x.step)))
                return torch_argument(x)

            try:
                out = fn(*tree_map(convert, bsym.args), **tree_map(convert, bsym.kwargs))
                out = tuple(out) if isinstance(out, tuple) else out  # torch.return_types: opened by tree_flatten
            except Exception:  # no meta kernel: callers fall back to a contiguous result
                out = None
        self._runs[key] = out
        return out

    def aliases(self, bsym: BoundSymbol, index: int = 0) -> bool:
        """Whether output ``index`` of ``bsym`` (a symbol of MAYBE_VIEWS) is a view of its first argument in
        eager."""
        base = self.meta(bsym.args[0])
        out = tree_flatten(self._run(bsym))[0][index]
        return isinstance(out, torch.Tensor) and (out is base or (out._is_view() and _root(out) is _root(base)))

    def may_alias_an_argument(self, p: TensorProxy) -> bool:
        """Whether ``p``, an output of an opaque call, shares memory with one of the call's tensor arguments in
        eager (asked of PyTorch on meta tensors); True where PyTorch cannot tell us."""
        b = self._producers.get(p.name)
        outs = self._run(b) if b is not None else None
        if outs is None:
            return True
        out = next((o for o, q in zip(tree_flatten(outs)[0], b.flat_outs) if isinstance(q, Proxy) and q.name == p.name),
                   None)
        if not isinstance(out, torch.Tensor):
            return True
        roots = {id(_root(self.meta(a))) for a in b.flat_args if isinstance(a, TensorProxy)}
        return id(_root(out)) in roots


def _input_numbers(trace) -> list:
    """The symbolic numbers ``trace`` takes: its number arguments and its tensor arguments' sizes."""
    numbers = []
    for a in tree_flatten(trace.args)[0]:
        values = a.shape if isinstance(a, TensorProxy) else (a,)
        numbers += [v for v in values if isinstance(v, NumberProxy) and not v.static]
    return numbers


def _number_names(trace) -> set:
    """Names of the numbers ``trace`` takes or computes (what its prologue can check)."""
    names = {n.name for n in _input_numbers(trace)}
    for b in trace.bound_symbols:
        names.update(o.name for o in b.flat_proxy_outs if isinstance(o, NumberProxy))
    return names
