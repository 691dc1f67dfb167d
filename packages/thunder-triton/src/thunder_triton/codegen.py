"""Writes one region as Triton source.

Values are named by position (``in0``, ``v3``, ``s0``), never by trace names, so identical regions (the
same block in every layer) give identical source and share one compiled kernel.

Indexing: an elementwise region runs 1-D blocks of ``XBLOCK`` flat indices over the domain, split into
per-dim indices with the sizes passed as arguments. A reduction region runs ``[XBLOCK, RBLOCK]`` blocks:
``XBLOCK`` rows (the domain without the reduction axis) by a whole reduced row (``RBLOCK >= RNUMEL``,
held in registers, so normalizations read their input once). Full-level values are whole blocks,
reduced ones ``[XBLOCK, 1]``, which broadcast back against full ones as in NumPy.

Every tensor is addressed through strides passed at launch (0 along broadcast dims), so strided,
transposed and broadcast inputs need no copies, and stores into ``copy_to_out_`` targets can be strided.
Half-precision values are computed in float32 and rounded where the trace has a half-precision value,
as eager PyTorch rounds after every op.
"""

from __future__ import annotations

from thunder.core.proxies import NumberProxy, TensorProxy, pyval
from thunder_triton import rules
from thunder_triton.regions import FULL, REDUCED, level_of

__all__ = ["KernelSpec", "generate", "KERNEL_NAME_PLACEHOLDER"]

KERNEL_NAME_PLACEHOLDER = "KERNEL_NAME"


class KernelSpec:
    """What the launcher needs besides the kernel: how to derive strides and allocate outputs.

    ``loads``/``stores``: (tensor index or None for a new output, level, dim_map) where dim_map[j] is the
    domain dim that tensor dim j runs along. ``new_outputs``: (shape form, thunder dtype) per new output,
    the form being 'full', 'dropped' or 'kept' (reduced without or with the reduced dim).
    ``results``: per region output, ('new', i) or ('input', tensor index) for a copy target.
    """

    def __init__(self, rank, raxis, n_tensors, n_scalars, loads, stores, new_outputs, results):
        self.rank, self.raxis, self.n_tensors, self.n_scalars = rank, raxis, n_tensors, n_scalars
        self.loads, self.stores, self.new_outputs, self.results = loads, stores, new_outputs, results

    def key(self) -> str:
        return repr((self.rank, self.raxis, self.n_tensors, self.n_scalars, self.loads, self.stores,
                     [(f, d.name) for f, d in self.new_outputs], self.results))


def _literal(x) -> str:
    if isinstance(x, bool):
        return repr(x)
    if isinstance(x, float):
        return repr(x) if x == x and abs(x) != float("inf") else f"float('{x}')"
    if isinstance(x, int):
        return repr(x)
    raise TypeError(f"thunder_triton: cannot write the constant {x!r} in a kernel")


def _cast(expr: str, d) -> str:
    """``expr`` in the compute type of thunder dtype ``d``, rounded to ``d`` first when ``d`` is narrower."""
    mem, compute = rules.DTYPES[d]
    rounding = _ROUNDING.get(mem)
    if rounding is not None:
        return rounding.format(f"({expr}).to({compute})")
    return f"({expr}).to({compute})"


# Rounding a float32 value to a narrower float, kept in float32. bfloat16 rounds to nearest even with
# integer ops: Triton's interpreter truncates in ``.to(tl.bfloat16)``, and this is exact on every backend.
_ROUNDING = {"tl.float16": "{0}.to(tl.float16).to(tl.float32)", "tl.bfloat16": "_round_bf16({0})"}
_PRELUDE = [
    "@triton.jit",
    "def _round_bf16(x):",
    "    bits = x.to(tl.uint32, bitcast=True)",
    "    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000",
    "    return tl.where(x != x, x, bits.to(tl.float32, bitcast=True))",
]


class _Writer:
    def __init__(self, domain, raxis, tensor_inputs):
        self.domain, self.raxis, self.n = domain, raxis, len(domain)
        self.tensor_index = {p.name: k for k, p in enumerate(tensor_inputs)}
        self.scalar_index: dict[str, int] = {}  # NumberProxy name -> argument
        self.scalars: list = []  # the numbers passed as kernel arguments, in order
        self.body: list[str] = []
        self.values: dict[str, str] = {}  # trace name -> variable
        self.levels: dict[str, str] = {}
        self.loads: dict[tuple, str] = {}  # (tensor index, level, dim_map) -> variable
        self.load_specs: list[tuple] = []
        self.counter = 0

    # names ---------------------------------------------------------------------------------------
    def fresh(self) -> str:
        self.counter += 1
        return f"v{self.counter - 1}"

    def level_dims(self, level) -> list[int]:
        if self.raxis is None or level == FULL:
            return list(range(self.n))
        return [k for k in range(self.n) if k != self.raxis]

    def offset(self, level, prefix: str) -> str:
        terms = [f"i{k} * {prefix}_{k}" for k in self.level_dims(level)]
        return " + ".join(terms) if terms else "xoffs * 0"

    def mask(self, level) -> str:
        return "fmask" if self.raxis is not None and level == FULL else "xmask"

    def direct_map(self, shape) -> tuple:
        if len(shape) == self.n:
            return tuple(range(self.n))
        return tuple(k for k in range(self.n) if k != self.raxis)

    # operands ------------------------------------------------------------------------------------
    def load(self, p: TensorProxy, level, dim_map) -> str:
        key = (self.tensor_index[p.name], level, tuple(dim_map))
        var = self.loads.get(key)
        if var is None:
            var = f"ld{len(self.load_specs)}"
            prefix = f"ls{len(self.load_specs)}"
            self.load_specs.append(key)
            self.loads[key] = var
            self.body.append(f"{var} = tl.load(in{key[0]} + ({self.offset(level, prefix)}), mask={self.mask(level)}, "
                             f"other=0).to({rules.DTYPES[p.dtype][1]})")
        return var

    def operand(self, x) -> str:
        if isinstance(x, TensorProxy):
            if x.name in self.values:
                return self.values[x.name]
            level = level_of(x.shape, self.domain, self.raxis)
            if level is None:
                # an operand whose sizes are other names for the domain's (a cat's gradient sliced back: ``i12`` is
                # ``2 * s0 - s0``): the op's meta made them equal (a constraint the prologue checks), so their values
                # tell the level. Left None, a reduction region indexed it as a reduced row, with fewer strides than
                # the launcher passed (fuzz seeds 1773, 2691: "got multiple values for argument 'XBLOCK'")
                level = level_of(tuple(map(pyval, x.shape)), tuple(map(pyval, self.domain)), self.raxis)
            return self.load(x, level, self.direct_map(x.shape))
        if isinstance(x, NumberProxy):
            k = self.scalar_index.get(x.name)
            if k is None:
                k = self.scalar_index[x.name] = len(self.scalars)
                self.scalars.append(x)
            return f"s{k}"
        if type(x) is int:
            # Integers are arguments, one per occurrence: sizes show up as integers (a mean divides by the
            # row length), and a kernel must not be specialized to one size.
            self.scalars.append(x)
            return f"s{len(self.scalars) - 1}"
        return _literal(x)

    def define(self, out, expr: str) -> None:
        var = self.fresh()
        self.body.append(f"{var} = {expr}")
        self.values[out.name] = var
        self.levels[out.name] = level_of(out.shape, self.domain, self.raxis)


# ---------------------------------------------------------------------------------------------
# One emitter per kind of prim (keyed by prim name below)
# ---------------------------------------------------------------------------------------------


def _emit_elementwise(w: _Writer, b, name) -> None:
    template, _ = rules.ELEMENTWISE[name]
    out = b.flat_proxy_outs[0]
    w.define(out, _cast(template.format(*[w.operand(a) for a in b.args]), out.dtype))


def _emit_pow(w: _Writer, b, name) -> None:
    out = b.flat_proxy_outs[0]
    w.define(out, _cast(rules.constant_power(b.args[1]).format(w.operand(b.args[0])), out.dtype))


def _emit_convert(w: _Writer, b, name) -> None:
    out = b.flat_proxy_outs[0]
    a = w.operand(b.args[0])
    w.define(out, f"({a} != 0)" if rules.DTYPES[out.dtype][1] == "tl.int1" else _cast(a, out.dtype))


def _emit_broadcast(w: _Writer, b, name) -> None:
    a, shape, bdims = b.args
    out = b.flat_proxy_outs[0]
    level = level_of(out.shape, w.domain, w.raxis)
    if a.name not in w.values:  # an input: load it with broadcast strides
        w.values[out.name], w.levels[out.name] = w.load(a, level, tuple(bdims)), level
        return
    if w.levels[a.name] == REDUCED and level == FULL:
        w.define(out, f"tl.broadcast_to({w.values[a.name]}, [XBLOCK, RBLOCK])")
    else:  # same values, same block
        w.values[out.name], w.levels[out.name] = w.values[a.name], level


def _emit_reduction(w: _Writer, b, name) -> None:
    out = b.flat_proxy_outs[0]
    a = w.operand(b.args[0])
    rule = rules.REDUCTIONS[name]
    if name == "var":
        correction = b.kwargs.get("correction", 1)
        c = w.operand(correction)
        mean, dev = w.fresh(), w.fresh()
        w.body.append(f"{mean} = tl.sum(tl.where(fmask, {a}, 0.0), axis=1, keep_dims=True) / RNUMEL")
        w.body.append(f"{dev} = tl.where(fmask, {a} - {mean}, 0.0)")
        w.define(out, _cast(f"tl.sum({dev} * {dev}, axis=1, keep_dims=True) / (RNUMEL - {c})", out.dtype))
        return
    masked = f"tl.where(fmask, {a}, {rule['neutral']})"
    w.define(out, _cast(rule["code"].format(v=masked), out.dtype))


def _emit_copy(w: _Writer, b, name) -> None:
    computed = b.args[0]
    for o in b.flat_proxy_outs:  # the copy's result is the computed value, now stored in ``out``
        w.values[o.name], w.levels[o.name] = w.operand(computed), w.levels.get(computed.name)


EMITTERS = {
    **{name: _emit_elementwise for name in rules.ELEMENTWISE},
    "pow": _emit_pow,
    "convert_element_type": _emit_convert,
    "broadcast_in_dim": _emit_broadcast,
    **{name: _emit_reduction for name in rules.REDUCTIONS},
    "copy_to_out_": _emit_copy,
}


def _index_lines(domain, raxis) -> list[str]:
    n = len(domain)
    lines = []
    if raxis is None:
        lines += ["xoffs = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)",
                  "xmask = xoffs < XNUMEL"]
        outer = list(range(n))
    else:
        lines += ["xoffs = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)[:, None]",
                  "xmask = xoffs < XNUMEL",
                  "roffs = tl.arange(0, RBLOCK)[None, :]",
                  "fmask = xmask & (roffs < RNUMEL)",
                  f"i{raxis} = roffs"]
        outer = [k for k in range(n) if k != raxis]
    # flat index -> per-dim indices, last dim fastest (row-major, like a contiguous tensor)
    if outer:
        lines.append("rest = xoffs")
        for k in reversed(outer[1:]):
            lines += [f"i{k} = rest % D{k}", f"rest = rest // D{k}"]
        lines.append(f"i{outer[0]} = rest")
    return lines


def generate(prims_, domain, raxis, tensor_inputs, outputs) -> tuple[str, KernelSpec, list]:
    """(source with KERNEL_NAME_PLACEHOLDER as the kernel's name, spec, scalar arguments) for one region.

    The scalar arguments are NumberProxies and integer constants of this region, in kernel order."""
    w = _Writer(domain, raxis, tensor_inputs)
    copies = []
    for b in prims_:
        name = b.sym.name
        EMITTERS[name](w, b, name)
        if name == "copy_to_out_":
            copies.append(b)
    n = len(domain)
    stores, new_outputs, results, store_lines = [], [], [], []

    def store(value_name, pointer, level, dim_map, dtype):
        k = len(stores)
        mem = rules.DTYPES[dtype][0]
        store_lines.append(f"tl.store({pointer} + ({w.offset(level, f'os{k}')}), {w.values[value_name]}.to({mem}), "
                           f"mask={w.mask(level)})")
        return k

    copy_of = {}
    for b in copies:
        target = b.kwargs["out"]
        level = level_of(target.shape, domain, raxis)
        idx = w.tensor_index[target.name]
        store(b.args[0].name, f"in{idx}", level, w.direct_map(target.shape), target.dtype)
        stores.append((idx, level, w.direct_map(target.shape)))
        for o in b.flat_proxy_outs:
            copy_of[o.name] = idx
    for o in outputs:
        if o.name in copy_of:
            results.append(("input", copy_of[o.name]))
            continue
        level = w.levels[o.name]
        form = "full" if level == FULL else ("kept" if len(o.shape) == n else "dropped")
        j = len(new_outputs)
        store(o.name, f"out{j}", level, w.direct_map(o.shape), o.dtype)
        stores.append((None, level, w.direct_map(o.shape)))
        new_outputs.append((form, o.dtype))
        results.append(("new", j))

    params = [f"in{k}" for k in range(len(tensor_inputs))] + [f"out{j}" for j in range(len(new_outputs))]
    params += [f"s{k}" for k in range(len(w.scalars))] + [f"D{k}" for k in range(n)]
    for k, (_, level, _) in enumerate(w.load_specs):
        params += [f"ls{k}_{d}" for d in w.level_dims(level)]
    for k, (_, level, _) in enumerate(stores):
        params += [f"os{k}_{d}" for d in w.level_dims(level)]
    params += ["XNUMEL"] + (["RNUMEL"] if raxis is not None else [])
    params += ["XBLOCK: tl.constexpr"] + (["RBLOCK: tl.constexpr"] if raxis is not None else [])
    lines = ["import triton", "import triton.language as tl", "", "", *_PRELUDE, "", "", "@triton.jit",
             f"def {KERNEL_NAME_PLACEHOLDER}({', '.join(params)}):"]
    lines += ["    " + line for line in _index_lines(domain, raxis) + w.body + store_lines]
    spec = KernelSpec(n, raxis, len(tensor_inputs), len(w.scalars), list(w.load_specs), stores, new_outputs,
                      results)
    return "\n".join(lines) + "\n", spec, w.scalars
