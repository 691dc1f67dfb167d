"""Strides, where the program's meaning depends on them.

Traces carry no strides, yet a few answers in eager PyTorch do depend on them: ``x.t().view(-1)`` raises,
``x.contiguous()`` is ``x`` itself or a copy. While the jit interprets the program it keeps, for each tensor
whose strides it can know (an input, and what the program computes from such tensors), a stand-in on the
``meta`` device with eager's sizes and strides, made by running the same torch call on the stand-ins of its
arguments: PyTorch itself computes the strides (an elementwise op keeps a transposed layout) and raises its own
errors. A call PyTorch cannot run on ``meta`` gives results of unknown layout, which the trace treats as
contiguous, as it did before; so do other ops of contiguous tensors, decided without meta kernels (see on_record).
A question answered from a stand-in makes the layout of the inputs it came from part of what the compiled program
assumed: the prologue checks that they are contiguous again, or have the same strides when they were not. Only
such inputs get a check; a program that asks nothing about strides checks none.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes
from thunder.core.proxies import NumberProxy, TensorProxy, pyval
from thunder.core.pytree import tree_flatten, tree_map

__all__ = ["Layouts"]

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
    "ltorch.getitem": torch.Tensor.__getitem__, "ltorch.contiguous": torch.Tensor.contiguous,
}
# the views whose success depends on the strides (the others always succeed once their meta accepted the shapes)
_STRIDE_CHECKED = {"ltorch.view", "ltorch.view_as"}


def _torch_calls() -> dict:
    """symbol id -> a torch callable the symbol stands for (they take the same arguments)."""
    from thunder.core.proxies import torch_function_table
    from thunder.core.symbol import Symbol

    calls: dict = {}
    for fn, sym in torch_function_table.items():
        if isinstance(sym, Symbol):
            calls.setdefault(sym.id, fn)
    calls.update(_VIEWS)
    return calls


_CALLS: dict = {}


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

    def add_input(self, proxy: TensorProxy, tensor: torch.Tensor) -> None:
        if tensor.layout is not torch.strided or tensor.is_nested:
            return
        standin = torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device="meta")
        self._known[id(proxy)] = (proxy, standin, frozenset((proxy.name,)))
        self.input_strides[proxy.name] = tuple(tensor.stride())
        self._input_layouts[proxy.name] = "contiguous" if tensor.is_contiguous() else self.input_strides[proxy.name]

    def _entry(self, proxy):
        entry = self._known.get(id(proxy))
        return entry if entry is not None and entry[0] is proxy else None

    def rely_on(self, inputs, exact: bool = False) -> None:
        """The program's meaning depends on the layout of these inputs (``exact``: on their very strides)."""
        for name in inputs:
            self.assumed[name] = self.input_strides[name] if exact else self._input_layouts[name]

    def strides(self, proxy: TensorProxy) -> tuple | None:
        """Eager's ``proxy.stride()`` (None: not known). The program may compute with the numbers: the strides of
        the inputs they come from are checked exactly."""
        entry = self._entry(proxy)
        if entry is None:
            return None
        self.rely_on(entry[2], exact=True)
        return tuple(entry[1].stride())

    def is_contiguous(self, proxy: TensorProxy) -> bool | None:
        """Whether ``proxy`` is contiguous in eager (None: not known, the trace treats it as contiguous)."""
        entry = self._entry(proxy)
        if entry is None:
            return None
        self.rely_on(entry[2])
        return entry[1].is_contiguous()

    def on_record(self, bsym) -> None:
        """After the program called ``bsym``: the stand-ins of its results, and eager's error for a view that
        the strides do not allow."""
        if not any(isinstance(x, TensorProxy) for x in bsym.flat_proxy_args):
            if "strided" not in bsym.sym.id:  # creation ops (zeros, arange, tensor(...)) make contiguous tensors
                for out in bsym.flat_proxy_outs:
                    if isinstance(out, TensorProxy):
                        standin = torch.empty(tuple(pyval(d) for d in out.shape), dtype=dtypes.to_torch_dtype(out.dtype),
                                              device="meta")
                        self._known[id(out)] = (out, standin, frozenset())
            return
        if not _CALLS:
            _CALLS.update(_torch_calls())
        fn = _CALLS.get(bsym.sym.id)
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
        if missing or any(isinstance(x, torch.Tensor) and x.device.type != "meta"
                                        for x in tree_flatten((args, kwargs))[0]):
            return  # an argument of unknown layout (or an index tensor): its results are of unknown layout
        if "inplace" in bsym.sym.tags:
            if args and isinstance(args[0], torch.Tensor):
                self._check_overlapping_write(fn, args, kwargs, inputs)
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
        metas = [m for m in tree_flatten(result)[0] if isinstance(m, torch.Tensor)]
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

    def _check_overlapping_write(self, fn, args, kwargs, inputs) -> None:
        """An in-place update of a tensor whose elements share memory (an expanded view): most such writes fail in
        eager, some do not (``fill_``, ``zero_``, a write to one row). Meta kernels do not check, so the call is run
        on small real tensors with the same layout, and eager's error, if any, is the program's."""
        target = args[0]
        if torch._debug_has_internal_overlap(target) != 1:
            return
        self.rely_on(inputs)
        extent = target.storage_offset() + sum((n - 1) * st for n, st in zip(target.shape, target.stride())) + 1

        def real(x):
            if x is target:
                return torch.zeros(extent, dtype=x.dtype).as_strided(x.shape, x.stride(), x.storage_offset())
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
                if "refers to a single memory location" in str(e):
                    raise
