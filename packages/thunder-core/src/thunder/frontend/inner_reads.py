"""Values read from tensor data inside a segment, where the program is not split.

A size the rest of the program only computes with (``nonzero``'s rows in an experts loop: its tensors are
``f32[i0, 128]``, its checks an expression of ``i0`` alone, such as a slice's ``i0 > 0``) needs no split: the pieces
around its read run as one segment, which reads the size where it is made and checks it there (``read_guard``);
``nonzero``'s is read from its result, as eager's kernel counts it. A scalar the program needed exactly (a branch on
``expert_idx == num_experts``, the number of experts hit a loop runs over) is read inside the same way, checked equal
to the value traced. Where a value fails its checks, the call runs again from its start on the segments split at
each read (frontend/segments.py), so the pieces up to such a segment must have no effect outside the call: no write
into an input, no random number drawn.
"""

from __future__ import annotations

from thunder.core.proxies import Proxy
from thunder.frontend.size_guards import exact_expression, read_guard

__all__ = ["spans", "span_bound_symbols", "check_inside"]


def check_inside(read) -> str | None:
    """The expression ``read_guard`` checks for ``read`` inside a segment ('' for none); None: it cannot be read
    inside (a size check naming a constant object, a list, a float, the text of a tensor). Only a size read has a
    ``guard`` (frontend/size_guards.py), whose expression is '' where it checks nothing."""
    return exact_expression(read) if read.guard is None else read.guard.expression


def spans(pieces, reads, first, enabled=True) -> list[tuple[int, int]]:
    """(first piece, last piece) of each segment from the ``first`` piece on: a read checked inside
    (``check_inside``) joins the pieces around it, where no piece up to there has an effect a restart of the call
    would repeat."""
    restartable = _restartable_pieces(pieces) if enabled else 0
    result, start = [], first
    for k in range(first, len(pieces)):
        if k + 1 < restartable and k < len(reads) and check_inside(reads[k]) is not None:
            continue
        result.append((start, k))
        start = k + 1
    return result


def span_bound_symbols(pieces, reads, k0, k1) -> tuple[list, list]:
    """(the bound symbols of pieces ``k0`` to ``k1`` as one segment, the values it reads inside in order): each
    checked where it is read; ``nonzero``'s size read from its result instead of counted before it."""
    bsyms, ends = [], []
    for k in range(k0, k1 + 1):
        bsyms += pieces[k][0]
        ends.append(len(bsyms))  # where the split was
    inner = [pieces[k][1].args[0] for k in range(k0, k1)]
    for k, value, end in reversed(list(zip(range(k0, k1), inner, ends))):
        expression = check_inside(reads[k])
        check = [read_guard.bind(value, expression, output=None)] if expression else []
        counted = _counted_by_nonzero(bsyms, value, end, check)
        if not counted:
            bsyms[end:end] = check
    return bsyms, inner


def _counted_by_nonzero(bsyms, size, end, check) -> bool:
    """``i = item(count)`` at the split, then ``nonzero_sized(a, i)`` first reading it, made ``nonzero_counted(a) ->
    (t, i)`` and ``check`` (the count, left unread, goes to dead-code elimination). False where ``size`` is no
    such count."""
    from thunder.torch.data_dependent import nonzero_counted

    if end == 0 or bsyms[end - 1].sym.id != "prims.item" or bsyms[end - 1].flat_proxy_outs[:1] != [size]:
        return False
    first_use = next((j for j in range(end, len(bsyms))
                      if any(getattr(p, "name", None) == size.name for p in bsyms[j].flat_proxy_args)), None)
    made = bsyms[first_use] if first_use is not None else None
    if made is None or made.sym.id != "ltorch.nonzero_sized" or made.args[1] is not size:
        return False
    bsyms[first_use:first_use + 1] = [nonzero_counted.bind(made.args[0], output=(made.output, size),
                                                           source=made.source), *check]
    del bsyms[end - 1]
    return True


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
