"""Sizes read from tensor data inside a segment, where the program is not split.

A size the rest of the program only computes with (``nonzero``'s rows in an experts loop: its tensors are
``f32[i0, 128]``, its checks an expression of ``i0`` alone, such as a broadcast's ``i0 != 1``) needs no split: the
pieces around its read run as one segment, which reads the size where it is made and checks it there
(``size_guard``); ``nonzero``'s is read from its result, as eager's kernel counts it. Where a size fails its checks,
the call runs again from its start on the segments split at each read (frontend/segments.py), so the pieces up to
such a segment must have no effect outside the call: no write into an input, no random number drawn.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy
from thunder.frontend.size_guards import size_guard

__all__ = ["spans", "span_bound_symbols"]


def spans(pieces, reads, first, enabled=True) -> list[tuple[int, int]]:
    """(first piece, last piece) of each segment from the ``first`` piece on: a size read the rest of the program
    only computes with (not needed exactly, its checks an expression of it alone) joins the pieces around it, where
    no piece up to there has an effect a restart of the call would repeat."""
    restartable = _restartable_pieces(pieces) if enabled else 0
    result, start = [], first
    for k in range(first, len(pieces)):
        read = reads[k] if k < len(reads) else None
        if k + 1 < restartable and read is not None and read.kind == "size" and read.guard is not None \
                and (not read.guard.checks or read.guard.expression is not None):
            continue
        result.append((start, k))
        start = k + 1
    return result


def span_bound_symbols(pieces, reads, k0, k1) -> tuple[list, list]:
    """(the bound symbols of pieces ``k0`` to ``k1`` as one segment, the sizes it reads inside in order): each size
    checked where it is read; ``nonzero``'s read from its result instead of counted before it."""
    bsyms = [b for k in range(k0, k1 + 1) for b in pieces[k][0]]
    inner = [pieces[k][1].args[0] for k in range(k0, k1)]
    for k, size in zip(range(k0, k1), inner):
        guard = reads[k].guard
        check = [size_guard.bind(size, guard.expression, output=None)] if guard.checks else []
        read_at = next(j for j, b in enumerate(bsyms) if b.sym.id == "prims.item" and b.flat_proxy_outs[:1] == [size])
        used_at = [j for j, b in enumerate(bsyms) if any(p is size or getattr(p, "name", None) == size.name
                                                         for p in b.flat_proxy_args)]
        made = bsyms[used_at[0]] if used_at else None
        if made is not None and made.sym.id == "ltorch.nonzero_sized" and made.args[1] is size:
            from thunder.torch.data_dependent import nonzero_counted

            counted = nonzero_counted.bind(made.args[0], output=(made.output, size), source=made.source)
            bsyms[used_at[0]:used_at[0] + 1] = [counted, *check]
            del bsyms[read_at]
        else:
            bsyms[read_at + 1:read_at + 1] = check
    return bsyms, inner


def _restartable_pieces(pieces) -> int:
    """How many pieces from the first have no effect outside the call: no write into a tensor the program did not
    make (an input), no random numbers drawn, no other side effect."""
    made: set[str] = set()
    for i, (bsyms, _) in enumerate(pieces):
        for b in bsyms:
            if _outside_effect(b, made):
                return i
            made.update(o.name for o in b.flat_proxy_outs)
    return len(pieces)


def _outside_effect(bsym, made) -> bool:
    out = bsym.kwargs.get("out")
    if isinstance(out, Proxy):
        return out.name not in made
    tags = bsym.sym.tags
    if bsym.sym.id == "prims.set_grad_enabled" or ("writes_no_argument" in tags and "random" not in tags):
        return False
    return bool({"random", "side_effect"} & set(tags)) or any(_outside_effect(s, made) for s in bsym.subsymbols)
