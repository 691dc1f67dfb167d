"""Sums of gradients placed in disjoint blocks of one tensor: one ``cat``, not zero blocks added together.

The gradient of a slice is its cotangent put back where the slice read, between zero blocks
(``cat([zeros, g, zeros], dim)``, grad/prim_rules.py). Where complementary slices of one tensor are all used
(rotary embeddings' ``x[..., :n // 2]`` and ``x[..., n // 2:]``, a partial rotary's rotated and passed-through
parts), the backward sums those placed gradients: ``cat([0, g1]) + cat([g2, 0])``. Where the blocks of the two
``cat``s line up and at each block at least one side is a zero fill, that sum is ``cat([g2, g1])``: the zero
fills and the add are work that eager's ``slice_backward`` does (a zero tensor, a copy into it, the sum) and this
does not. The values are eager's: adding a zero is exact; only a cotangent's -0.0 stays -0.0 where eager's sum
makes it +0.0 (equal as numbers).
"""

from __future__ import annotations

from thunder.core import prims
from thunder.core.proxies import TensorProxy
from thunder.core.shapes import same_dims
from thunder.extend.regions import count_uses

__all__ = ["merge_placed_sums", "merge_scattered_sums"]


def _is_zero_fill(bsym) -> bool:
    return bsym is not None and bsym.sym is prims.full and type(bsym.args[1]) in (int, float) and bsym.args[1] == 0


def _blocks(bsym, dim, producer):
    """The blocks of a ``cat`` along ``dim`` as (part, size, is a zero fill), or None when it is another op, another
    dim, or a block's size is symbolic (blocks could not be lined up without a check)."""
    if bsym is None or bsym.sym is not prims.cat or bsym.args[1] != dim:
        return None
    blocks = [(p, p.shape[dim], _is_zero_fill(producer.get(p.name))) for p in bsym.args[0]]
    return blocks if all(type(size) is int for _, size, _ in blocks) else None


def _merged_parts(a, b, out, producer, uses):
    """(the parts, the dim) of the one ``cat`` that ``a + b`` is, or None where they are not two cats, read only
    there, whose non-zero blocks each fall inside a zero block of the other (a zero block may take several)."""
    if not (isinstance(a, TensorProxy) and isinstance(b, TensorProxy)) or a.name == b.name \
            or uses.get(a.name) != 1 or uses.get(b.name) != 1:
        return None
    cat_a = producer.get(a.name)
    if cat_a is None or cat_a.sym is not prims.cat:
        return None
    dim = cat_a.args[1]
    blocks_a, blocks_b = _blocks(cat_a, dim, producer), _blocks(producer.get(b.name), dim, producer)
    if blocks_a is None or blocks_b is None or any(p.dtype is not out.dtype for p, _, _ in blocks_a + blocks_b):
        return None
    merged, i, j = [], 0, 0
    left_a, left_b = blocks_a[0][1], blocks_b[0][1]  # what is left of the current block of each side
    while i < len(blocks_a) and j < len(blocks_b):
        (part_a, size_a, zero_a), (part_b, size_b, zero_b) = blocks_a[i], blocks_b[j]
        if not zero_a and not zero_b:
            return None
        if zero_a and zero_b:  # zeros on both sides: a zero fill of exactly that size, where one side has it
            n = min(left_a, left_b)
            if n == left_a == size_a:
                merged.append(part_a)
            elif n == left_b == size_b:
                merged.append(part_b)
            else:
                return None
        elif zero_a:
            n = size_b
            if n > left_a:
                return None
            merged.append(part_b)
        else:
            n = size_a
            if n > left_b:
                return None
            merged.append(part_a)
        left_a, left_b = left_a - n, left_b - n
        if left_a == 0:
            i += 1
            left_a = blocks_a[i][1] if i < len(blocks_a) else 0
        if left_b == 0:
            j += 1
            left_b = blocks_b[j][1] if j < len(blocks_b) else 0
    if i != len(blocks_a) or j != len(blocks_b):
        return None
    return merged, dim


def _static_shape(p: TensorProxy) -> tuple | None:
    """``p``'s shape where every size is a number known now (comparing symbolic sizes records checks)."""
    return tuple(p.shape) if all(type(d) is int for d in p.shape) else None


def _regrouped(add, producer, uses):
    """``(x + c1) + c2`` with ``c1`` and ``c2`` placed blocks that fit together (the cotangent of ``x * cos`` summed
    with a rotated half's, then with the other half's): (x, c1, c2), to be summed as ``x + cat(...)``. Each
    element gets ``x`` plus the one block that is not zero there, as before. Returns (the inner sum, x, the
    merged parts, their dim, c2)."""
    out = add.flat_proxy_outs[0]
    if not all(type(d) is int for d in out.shape):
        return None
    for acc, placed in (add.args, add.args[::-1]):
        inner = producer.get(acc.name) if isinstance(acc, TensorProxy) else None
        if inner is None or inner.sym is not prims.add or uses.get(acc.name) != 1:
            continue
        for x, earlier in (inner.args, inner.args[::-1]):
            if isinstance(x, TensorProxy) and x.dtype is out.dtype and _static_shape(x) == tuple(out.shape):
                found = _merged_parts(earlier, placed, out, producer, uses)
                if found is not None:
                    return acc, x, *found, placed
    return None


def merge_placed_sums(bound_symbols: list, output, make_name) -> list:
    """``bound_symbols`` (a backward, before executor dispatch) with each sum of two placed-block ``cat``s made one
    ``cat`` (``make_name`` names a ``cat`` made for a regrouped sum), and the fills, ``cat``s and sums that only fed
    such a sum dropped."""
    if not any(b.sym is prims.cat for b in bound_symbols):
        return bound_symbols
    uses = count_uses(bound_symbols, output)

    def read(proxies, by):
        for p in proxies:
            uses[p.name] = uses.get(p.name, 0) + by

    producer = {}
    result, changed = [], False
    for b in bound_symbols:
        made = [b]
        if b.sym is prims.add and len(b.flat_proxy_outs) == 1 and isinstance(b.flat_proxy_outs[0], TensorProxy):
            out = b.flat_proxy_outs[0]
            found = _merged_parts(*b.args, out, producer, uses)
            regrouped = None if found is not None else _regrouped(b, producer, uses)
            if found is not None:
                parts, dim = found
                read(b.flat_proxy_args, -1)
                read(parts, 1)
                made = [prims.cat.bind(parts, dim, output=b.output, source=b.source)]
            elif regrouped is not None:
                acc, x, parts, dim, placed = regrouped
                merged = TensorProxy(make_name(), shape=out.shape, dtype=out.dtype, device=out.device)
                read((acc, placed), -1)  # the inner sum, left unread, is dropped below (and its reads with it)
                read((x, *parts), 1)
                uses[merged.name] = 1
                made = [prims.cat.bind(parts, dim, output=merged, source=b.source),
                        prims.add.bind(x, merged, output=b.output, source=b.source)]
            changed = changed or made[0] is not b
        for m in made:
            for o in m.flat_proxy_outs:
                producer[o.name] = m
        result.extend(made)
    if not changed:
        return bound_symbols
    # drop what no longer has a reader: the replaced cats and sums, then the fills only they read
    return _without_unread(result, uses, (prims.cat, prims.full, prims.add))


def _one_position(indices) -> bool:
    """Whether ``indices`` (of an ``index_put``) are 0-d tensors or numbers: one position, no repeated index, so adding
    there into a sum adds each value once, in eager's order."""
    return isinstance(indices, (tuple, list)) and all(not isinstance(i, TensorProxy) or i.ndim == 0 for i in indices)


def merge_scattered_sums(bound_symbols: list, output) -> list:
    """``bound_symbols`` (a backward, before executor dispatch) with each ``a + index_put(zeros, idx, g, True)`` at
    one position (the gradient of ``w[expert]`` summed over an experts loop in one segment) made
    ``index_put(a, idx, g, True)``: the gradient is added into the sum so far, which the torch executor then updates
    in place (one weight-sized fill for the loop, where eager fills and adds one per expert). The values are eager's:
    at that position ``a + (0 + g)`` is ``a + g``; only a ``-0.0`` may stay ``-0.0`` where eager's is ``+0.0``."""
    if not any(b.sym is prims.index_put for b in bound_symbols):
        return bound_symbols
    uses = count_uses(bound_symbols, output)
    producer = {}
    result, changed = [], False
    for b in bound_symbols:
        made = b
        if b.sym is prims.add and len(b.flat_proxy_outs) == 1 and isinstance(b.flat_proxy_outs[0], TensorProxy):
            out = b.flat_proxy_outs[0]
            for acc, placed in (b.args, b.args[::-1]):
                put = producer.get(placed.name) if isinstance(placed, TensorProxy) else None
                if put is None or put.sym is not prims.index_put or put.args[3] is not True \
                        or uses.get(placed.name) != 1 or not _is_zero_fill(producer.get(put.args[0].name)) \
                        or not _one_position(put.args[1]) or not isinstance(acc, TensorProxy) \
                        or acc.dtype is not out.dtype or not same_dims(acc.shape, out.shape) \
                        or not same_dims(placed.shape, out.shape):
                    continue
                made = prims.index_put.bind(acc, put.args[1], put.args[2], True, output=b.output, source=b.source)
                uses[placed.name] -= 1
                changed = True
                break
        for o in made.flat_proxy_outs:
            producer[o.name] = made
        result.append(made)
    if not changed:
        return bound_symbols
    # drop the scatters into zeros no sum reads any more, then the fills only they read
    return _without_unread(result, uses, (prims.index_put, prims.full))


def _without_unread(bsyms, uses, symbols) -> list:
    """``bsyms`` without those of ``symbols`` whose outputs nothing reads (``uses``: reads by name, updated as each
    is dropped, so what only a dropped one read goes too)."""
    kept = []
    for b in reversed(bsyms):
        if b.sym in symbols and all(uses.get(o.name, 0) == 0 for o in b.flat_proxy_outs):
            for p in b.flat_proxy_args:
                uses[p.name] = uses.get(p.name, 0) - 1
            continue
        kept.append(b)
    return kept[::-1]
