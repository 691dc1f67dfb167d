"""Eager's errors for the indices a program reads from tensors it made of Python numbers (``torch.tensor([1, 0])``).

An index tensor's bounds are data, which the kernel checks when the compiled computation runs: by then the side
effects the program made before the op (a list appended to, a global set) are lost, since the epilogue that makes
them never runs. Where an op's index tensors are such constants, their values are known while tracing: the op runs
once on small real tensors (the constants, and zeros for the other tensors, which index nothing), and eager's error,
if any, is raised where the program called the op, so the entry does what came before it, then raises.
"""

from __future__ import annotations

import torch

from thunder.core import dtypes
from thunder.core.proxies import TensorProxy, pyval
from thunder.core.pytree import tree_flatten, tree_map
from thunder.core.shapes import as_ints, numel
from thunder.torch.opaque import OPAQUE_ID_PREFIX

__all__ = ["ConstantIndices"]

_MOST_ELEMENTS = 1 << 16  # the largest run on real tensors, all arguments together
_CONSTRUCTORS = {"ltorch.tensor"}  # symbol ids that make a tensor of the Python numbers in their first argument


def _checked_errors(bsym) -> tuple:
    """The errors of eager's that a run of ``bsym`` on real tensors raises as the program's: where it or its
    decomposition reads indices from tensor data (the prims tagged data_checked), index and runtime errors; where it
    makes an opaque call, which may read some, index errors only (others may come from the zeros: a singular matrix);
    else none."""
    calls = list(_calls(bsym))
    if any("data_checked" in b.sym.tags for b in calls):
        return IndexError, RuntimeError
    if any(b.sym.id.startswith(OPAQUE_ID_PREFIX) and "random" not in b.sym.tags for b in calls):
        return (IndexError,)
    return ()


def _calls(bsym):
    yield bsym
    for s in bsym.subsymbols:
        yield from _calls(s)


class ConstantIndices:
    def __init__(self):
        self._values: dict[int, tuple] = {}  # id(proxy) -> (proxy, its value: a real CPU tensor)

    def on_record(self, bsym) -> None:
        if bsym.sym.id in _CONSTRUCTORS:
            self._record_constant(bsym)
            return
        errors = _checked_errors(bsym)
        if errors:
            self._raise_eagers_index_error(bsym, errors)

    def _record_constant(self, bsym) -> None:
        (out,) = bsym.flat_proxy_outs or (None,)
        leaves = tree_flatten(bsym.args[0] if bsym.args else None)[0]
        if not isinstance(out, TensorProxy) or not all(type(x) in (bool, int, float) for x in leaves):
            return  # a symbolic number among the values: not a constant
        value = torch.tensor(bsym.args[0], dtype=dtypes.to_torch_dtype(out.dtype))
        if tuple(value.shape) == tuple(pyval(d) for d in out.shape):
            self._values[id(out)] = (out, value)

    def _constant(self, x):
        entry = self._values.get(id(x))
        return entry[1] if entry is not None and entry[0] is x else None

    def as_list(self, x):
        """The values of ``x`` as a Python list where it is a 1-D integer constant (an index), else ``x``."""
        value = self._constant(x) if isinstance(x, TensorProxy) else None
        if value is None or value.ndim != 1 or value.dtype not in (torch.int64, torch.int32):
            return x
        return value.tolist()

    def _raise_eagers_index_error(self, bsym, errors: tuple) -> None:
        tensors = [x for x in bsym.flat_proxy_args if isinstance(x, TensorProxy)]
        if not any(self._constant(x) is not None for x in tensors):
            return
        if sum(numel(as_ints(x.shape)) for x in tensors) > _MOST_ELEMENTS:
            return
        from thunder.transforms.layouts import _eager_call, torch_argument

        fn = _eager_call(bsym)
        if fn is None:
            return

        def real(x):
            if isinstance(x, TensorProxy):
                value = self._constant(x)
                return value if value is not None else torch.zeros(tuple(pyval(d) for d in x.shape),
                                                                   dtype=dtypes.to_torch_dtype(x.dtype))
            return torch_argument(x, "cpu")

        args, kwargs = tree_map(real, (bsym.args, bsym.kwargs))
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # eager's own warnings come when the program runs
            try:
                fn(*args, **kwargs)
            except errors as e:
                raise type(e)(*e.args) from None
            except Exception:  # an error eager raises for other values, or a call this run cannot make
                return
