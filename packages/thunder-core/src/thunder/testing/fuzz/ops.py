"""The statement builders the generator draws from, one table row per kind of statement.

A builder gets a ``Scope`` (the variables so far, with their first-call values) and returns one statement of
source (it may span lines) or None when nothing in scope fits. Builders need not be exact about validity: the
generator runs every candidate in eager on every call variant and keeps it only when eager accepts it (or, rarely,
as the program's last statement, to check that thunder raises what eager raises).

To add an op: write a builder and add a row to ``OPS`` (name, category, weight). Categories are the groups
``--categories`` can select and the report counts by. ``KERNEL_OPS`` are drawn only with ``--kernels`` (so that a
seed's program stays what it was for the default table): the composites an executor runs as one ATen kernel each,
forward and backward (norms, attention, convolution, pooling, losses, embedding), on whatever layout the program's
tensors have (a kernel that reads memory as laid out one way gives garbage for other strides, without an error).
"""

from __future__ import annotations

import dataclasses

from thunder.testing.fuzz.scope import Scope

__all__ = ["KERNEL_OPS", "OPS", "Op"]


@dataclasses.dataclass(frozen=True)
class Op:
    name: str
    category: str
    weight: float
    build: object  # Scope -> str | None


def _t(s: Scope, pred=lambda v: True):
    return s.tensor(pred)


def _float(v):
    return v.is_float


def _nonbool(v):
    return v.is_tensor and not v.is_bool


# --- elementwise -------------------------------------------------------------------------------------------------

FLOAT_UNARY = ["torch.neg({x})", "torch.abs({x})", "torch.exp({x})", "torch.sin({x})", "torch.tanh({x})",
               "torch.sigmoid({x})", "torch.relu({x})", "torch.sqrt(torch.abs({x}))", "torch.log1p(torch.abs({x}))",
               "torch.clamp({x}, min=-1, max=1)", "{x}.float()", "{x}.to(torch.float64)", "torch.square({x})",
               "torch.floor({x})", "torch.round({x})", "torch.sign({x})", "{x}.exp().log()", "torch.erf({x})",
               "torch.nn.functional.gelu({x})", "torch.nn.functional.silu({x})", "{x}.reciprocal()",
               "torch.rsqrt({x}.abs() + 1)", "-{x}", "abs({x})", "{x}.half().float()", "{x}.to(torch.int64)",
               "{x}.bool()", "torch.nan_to_num({x}.log())"]
INT_UNARY = ["torch.neg({x})", "torch.abs({x})", "-{x}", "~{x}", "{x}.float()", "torch.clamp({x}, min=0)",
             "torch.bitwise_not({x})", "{x}.bool()", "{x} // 2", "{x} % 3", "torch.sign({x})"]
BOOL_UNARY = ["~{x}", "torch.logical_not({x})", "{x}.int()", "{x}.float()", "{x}.long().sum()"]


def unary(s: Scope):
    x = _t(s)
    if x is None:
        return None
    table = FLOAT_UNARY if x.is_float else INT_UNARY if x.is_int else BOOL_UNARY
    return f"{s.fresh()} = {s.rng.choice(table).format(x=x.name)}"


BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "torch.maximum({a}, {b})", "torch.minimum({a}, {b})",
          "{a} > {b}", "{a} <= {b}", "{a} == {b}", "torch.add({a}, {b}, alpha=2)", "torch.where({a} > 0, {a}, {b})",
          "{a}.where({a} > 0, {b})", "torch.atan2({a}.float(), {b}.float())", "torch.mul({a}, {b})",
          "torch.sub({a}, {b})", "{a} ** 2 + {b}", "torch.lerp({a}.float(), {b}.float(), 0.25)"]
BITWISE = ["{a} & {b}", "{a} | {b}", "{a} ^ {b}", "torch.logical_and({a}, {b})", "torch.logical_or({a}, {b})"]


def binary(s: Scope):
    a, b = s.two_tensors(lambda a, b: a.rank >= b.rank - 1)
    if a is None:
        return None
    if a.is_float or b.is_float or s.rng.random() < 0.6:
        expr = s.rng.choice(BINARY)
    else:
        expr = s.rng.choice(BITWISE)
    return f"{s.fresh()} = {expr.format(a=a.name, b=b.name)}"


SCALAR_BINARY = ["{x} * {n}", "{x} + {n}", "{n} - {x}", "{x} / ({n} + 10)", "{x} > {n}", "torch.add({x}, {n})",
                 "torch.full_like({x}, {n})", "{x}.clamp(max={n})", "torch.pow({x}.abs() + 1, 2)",
                 "torch.where({x} > 0, {x}, {n})"]


def scalar_binary(s: Scope):
    x = _t(s, _nonbool)
    if x is None:
        return None
    return f"{s.fresh()} = {s.rng.choice(SCALAR_BINARY).format(x=x.name, n=s.scalar_expr())}"


def global_branch(s: Scope):
    x = _t(s, _nonbool)
    if x is None:
        return None
    y = s.fresh()
    return f"if FLAG:\n    {y} = {x.name} * G\nelse:\n    {y} = {x.name} - 1"


# --- reductions ---------------------------------------------------------------------------------------------------

FLOAT_REDUCE = ["{x}.sum({d})", "{x}.sum({d}, keepdim=True)", "{x}.mean({d})", "{x}.amax({d})", "{x}.amin({d})",
                "{x}.prod({d})", "{x}.argmax({d})", "{x}.std({d})", "{x}.var({d}, keepdim=True)",
                "torch.logsumexp({x}, {d})", "torch.softmax({x}, {d})", "torch.cumsum({x}, {d})",
                "{x}.max({d}).values", "torch.min({x}, {d})[1]", "torch.log_softmax({x}, dim={d})",
                "torch.nn.functional.normalize({x}, dim={d})", "{x}.norm(dim={d})", "torch.sum({x})", "{x}.mean()",
                "{x}.sum(({d},))", "torch.amax({x}, dim=({d}, 0))"]
INT_REDUCE = ["{x}.sum({d})", "{x}.amax({d})", "{x}.prod({d})", "torch.cumsum({x}, {d})", "{x}.sum()",
              "{x}.any({d})", "torch.sum({x} > 0)", "{x}.max()"]
BOOL_REDUCE = ["{x}.any({d})", "{x}.all({d})", "{x}.sum({d})", "torch.sum({x})", "{x}.any()"]


def reduction(s: Scope):
    x = _t(s, lambda v: v.rank >= 1)
    if x is None:
        return None
    table = FLOAT_REDUCE if x.is_float else INT_REDUCE if x.is_int else BOOL_REDUCE
    return f"{s.fresh()} = {s.rng.choice(table).format(x=x.name, d=s.dim(x))}"


# --- views and reshapes ------------------------------------------------------------------------------------------

def view(s: Scope):
    x = _t(s)
    if x is None:
        return None
    r = x.rank
    choices = ["{x}.reshape(-1)", "{x}.view(-1)", "{x}.flatten()", "{x}.unsqueeze({d1})", "{x}[None]",
               "{x}.contiguous()", "{x}.reshape({x}.shape)", "{x}.view({x}.shape)"]
    if r >= 1:
        choices += ["{x}.squeeze({d})", "{x}.unsqueeze(-1).expand(*{x}.shape, 2)", "{x}.flip({d})",
                    "{x}.narrow({d}, 0, 1)", "{x}.unflatten({d}, ({x}.shape[{d}], 1))", "{x}.movedim({d}, 0)",
                    "{x}.split(1, {d})[0]", "{x}.chunk(2, {d})[-1]", "torch.unbind({x}, {d})[0]",
                    "{x}.reshape({x}.shape[0], -1)", "{x}.expand(2, *{x}.shape)", "{x}.repeat(2, *([1] * {x}.dim()))"]
    if r >= 2:
        choices += ["{x}.t()" if r == 2 else "{x}.mT", "{x}.transpose({d}, {d2})", "{x}.mT.contiguous()",
                    "{x}.permute(*reversed(range({x}.dim())))", "{x}.flatten(0, 1)", "{x}.diagonal()",
                    "{x}.view({x}.shape[0] * {x}.shape[1], -1)", "{x}.mT.reshape(-1)", "{x}.mT.view(-1)",
                    "{x}.reshape({x}.shape[1], {x}.shape[0], *{x}.shape[2:])"]
    d = s.dim(x) if r else 0
    d2 = s.dim(x) if r else 0
    d1 = s.rng.randrange(-r - 1, r + 1)
    return f"{s.fresh()} = {s.rng.choice(choices).format(x=x.name, d=d, d2=d2, d1=d1)}"


# --- indexing -----------------------------------------------------------------------------------------------------

def getitem(s: Scope):
    x = _t(s, lambda v: v.rank >= 1)
    if x is None:
        return None
    choices = ["{x}[0]", "{x}[-1]", "{x}[1:]", "{x}[:, ::2]", "{x}[..., 0]", "{x}[[0, 1]]", "{x}[:{k}]",
               "{x}[torch.tensor([0, -1])]", "{x}[{x}.shape[0] - 1]", "{x}[None, 1:, ...]", "{x}[::-1]",
               "{x}.index_select(0, torch.tensor([1, 0, 1]))", "{x}[:, [1, 0]]", "{x}[0, 1]", "{x}[1:-1:2]",
               "torch.gather({x}, {d}, torch.zeros_like({x}, dtype=torch.long))", "{x}[{i}]"]
    ints = [v for v in s.vars if v.is_int and v.rank == 1]
    if ints:
        choices.append("{x}[{i}.clamp(0, {x}.shape[0] - 1)]")
    i = s.rng.choice(ints).name if ints else "0"
    return f"{s.fresh()} = {s.rng.choice(choices).format(x=x.name, k=s.int_expr(), d=s.dim(x), i=i)}"


def data_dependent(s: Scope):
    """Values read from tensor data (boolean masks, .item(), nonzero): the program is split where it reads one."""
    x = _t(s, lambda v: v.rank >= 1 and not v.is_bool)
    if x is None:
        return None
    y = s.fresh()
    choices = [f"{y} = {x.name}[{x.name} > 0]", f"{y} = {x.name}.sum().item() * 2", f"{y} = torch.nonzero({x.name})",
               f"{y} = {x.name}.tolist()", f"if {x.name}.sum() > 0:\n    {y} = {x.name} + 1\nelse:\n    {y} = {x.name} - 1",
               f"{y} = {x.name}.unique()", f"{y} = {x.name}[({x.name} > 0).nonzero(as_tuple=True)]"]
    return s.rng.choice(choices)


def setitem(s: Scope):
    x = _t(s, lambda v: v.rank >= 1 and not v.value.requires_grad)
    if x is None:
        return None
    choices = ["{x}[0] = 1", "{x}[:, 1:] = 0", "{x}[-1] = {x}[0]", "{x}[{x} > 0] = 0", "{x}[[0, 1]] = 2",
               "{x}[..., 0] = {n}", "{x}[torch.tensor([0])] = {x}[1:2]"]
    return s.rng.choice(choices).format(x=x.name, n=s.scalar_expr())


# --- matmul family, cat/stack -------------------------------------------------------------------------------------

def matmul(s: Scope):
    a = _t(s, lambda v: v.is_float and v.rank >= 1)
    if a is None:
        return None
    same = [b for b in s.vars if b.is_float and b.dtype == a.dtype and b.rank >= 1]
    b = s.rng.choice(same)
    choices = ["{a} @ {a}.mT" if a.rank >= 2 else "{a} @ {a}", "torch.matmul({a}, {b})", "{a} @ {b}",
               "torch.nn.functional.linear({a}, {b})", "torch.einsum('...i,...i->...', {a}, {a})"]
    if a.rank == 2:
        choices += ["torch.mm({a}, {a}.t())", "torch.mm({a}.t(), {b})", "torch.addmm({a}, {a}, {a}.t()[:, :{a}.shape[1]])"]
    if a.rank == 3:
        choices += ["torch.bmm({a}, {a}.transpose(1, 2))", "torch.bmm({a}, {b})"]
    return f"{s.fresh()} = {s.rng.choice(choices).format(a=a.name, b=b.name)}"


def cat(s: Scope):
    a, b = s.two_tensors(lambda a, b: a.rank == b.rank and a.rank >= 1)
    if a is None:
        return None
    d = s.dim(a)
    choices = ["torch.cat([{a}, {b}], {d})", "torch.stack([{a}, {b}])", "torch.cat([{a}, {a}], dim={d})",
               "torch.stack([{a}, {a} * 2], {d})", "torch.cat(({a}, {b}.to({a}.dtype)))", "torch.hstack([{a}, {b}])",
               "torch.cat([{a}] * 3, {d})"]
    return f"{s.fresh()} = {s.rng.choice(choices).format(a=a.name, b=b.name, d=d)}"


# --- creation ----------------------------------------------------------------------------------------------------

def creation(s: Scope):
    x = _t(s, lambda v: v.rank >= 1)
    n = s.int_expr()
    choices = ["torch.zeros({n})", "torch.ones({n}, 2)", "torch.arange({n})", "torch.full(({n},), 2.5)",
               "torch.eye({n})", "torch.linspace(0, 1, {n})", "torch.tensor([0, 2])", "torch.tensor(3.5)",
               "torch.zeros(3)", "torch.ones(2, 3, dtype=torch.float64)", "torch.arange(0, {n}, 2)",
               "torch.empty({n}).fill_(1)"]
    if x is not None:
        choices += ["torch.zeros_like({x})", "torch.ones_like({x}, dtype=torch.float32)", "torch.full_like({x}, 7)",
                    "{x}.new_zeros({x}.shape)", "{x}.new_ones(3)", "torch.zeros({x}.shape[0], 3)",
                    "torch.arange({x}.shape[-1])", "torch.eye({x}.shape[-1])", "torch.linspace(0, 1, {x}.shape[-1])",
                    "torch.zeros({x}.shape)", "torch.ones(*{x}.shape[1:])", "torch.tensor({x}.shape)",
                    "torch.full({x}.shape, {s})", "torch.randn_like({x}.float()).zero_()"]
        x = x.name
    return f"{s.fresh()} = {s.rng.choice(choices).format(n=n, x=x, s=s.scalar_expr())}"


# --- in-place ----------------------------------------------------------------------------------------------------

FLOAT_INPLACE = ["{x}.add_(1)", "{x}.mul_({y})", "{x}.clamp_(min=0)", "{x}.zero_()", "{x}.fill_(2)", "{x}.relu_()",
                 "{x}.masked_fill_({x} > 0, 0)", "{x}.copy_({y})", "{x}.sub_({y}, alpha=2)", "{x}.div_(2)",
                 "{x}.neg_()", "{x}.exp_()", "{x}.t_()", "{x}.index_fill_(0, torch.tensor([0]), -1.0)",
                 "{x}.index_copy_(0, torch.tensor([0]), {x}[1:2] * 2)", "{x}.addcmul_({y}, {y})", "{x} += 1",
                 "{x} *= {y}", "{x} -= {n}", "{x}[0].mul_(3)", "{x}[..., :1].add_(1)", "{x}.unsqueeze(0).mul_(2)",
                 "{x}.view(-1).add_(1)", "{x}.diagonal().zero_()", "{x}.mT.sub_(1)", "{x}.expand(2, *{x}.shape).add_(1)",
                 "{x}.pow_(2)", "{x}.lerp_({y}, 0.5)", "{x}.sigmoid_()", "{x}.abs_()", "{x}.floor_()",
                 "{x}.unsqueeze_(0)", "{x}.squeeze_()", "{x}.transpose_(0, -1)", "{x}[0].unsqueeze_(-1).mul_(2)"]
INT_INPLACE = ["{x}.add_(1)", "{x}.mul_({y})", "{x}.clamp_(min=0)", "{x}.zero_()", "{x}.fill_(2)", "{x} += 1",
               "{x}[0].add_(3)", "{x}.neg_()", "{x}.bitwise_and_(3)", "{x} //= 2", "{x}.masked_fill_({x} > 0, 0)",
               "{x}.index_fill_(0, torch.tensor([0]), 9)", "{x}.t_()", "{x}.copy_({y})", "{x}.swapdims_(0, -1)"]
BOOL_INPLACE = ["{x}.logical_not_()", "{x} |= {y}", "{x}.fill_(True)", "{x}[0] = False", "{x}.copy_({y})"]


def inplace(s: Scope):
    x = _t(s, lambda v: v.rank >= 1 and not v.value.requires_grad)
    if x is None:
        return None
    same = [v for v in s.vars if v.is_tensor and v.dtype == x.dtype and v.rank <= x.rank]
    y = s.rng.choice(same).name
    table = FLOAT_INPLACE if x.is_float else INT_INPLACE if x.is_int else BOOL_INPLACE
    return s.rng.choice(table).format(x=x.name, y=y, n=s.scalar_expr())


def view_then_inplace(s: Scope):
    """A view as its own variable, updated in place, so the base (maybe an input) must see the update."""
    x = _t(s, lambda v: v.rank >= 1 and not v.value.requires_grad and not v.is_bool)
    if x is None:
        return None
    u = s.fresh()
    view = s.rng.choice(["{x}[0]", "{x}[1:]", "{x}.view(-1)", "{x}.unsqueeze(0)", "{x}.transpose(0, -1)",
                         "{x}.narrow(0, 0, 1)", "{x}[..., ::2]"]).format(x=x.name)
    update = s.rng.choice(["{u}.add_(1)", "{u}.mul_(2)", "{u}.zero_()", "{u}[...] = 5", "{u}.clamp_(max=0)"])
    return f"{u} = {view}\n{update.format(u=u)}"


# --- Python numbers --------------------------------------------------------------------------------------------

INT_ARITH = ["{a} * {b} + 1", "{a} // 2", "{a} % 3", "divmod({a}, 2)[0]", "{a} << 1", "{a} >> 1", "{a} & 3", "{a} | 1",
             "{a} ^ 2", "max({a}, {b})", "min({a}, {b})", "abs({a} - 5)", "{a} - {b}", "len({x})", "{x}.numel() // 2",
             "{x}.dim()", "{x}.size(0) - 1", "-{a}", "{a} ** 2", "int({a} / 2)", "sum([{a}, {b}])"]
FLOAT_ARITH = ["{f} * 2.5 - {a}", "float({a}) / 3", "round({f} * 3)", "int({f} * 2)", "{a} / 3", "round({a} / 3)",
               "abs({f})", "max({f}, 0.25)", "{f} ** 2", "G * {f}", "{f} // 0.5"]


def number_arith(s: Scope):
    a, b = s.int_expr(), s.int_expr()
    floats = [v.name for v in s.numbers((float,))] or ["0.75"]
    f = s.rng.choice(floats + ["G"])
    sized = [v for v in s.vars if v.is_tensor and v.rank >= 1]
    x = s.rng.choice(sized).name if sized else None
    table = [e for e in INT_ARITH if x is not None or "{x}" not in e]
    if s.rng.random() < 0.35:
        table = FLOAT_ARITH
    return f"{s.fresh()} = {s.rng.choice(table).format(a=a, b=b, f=f, x=x)}"


def number_use(s: Scope):
    """Use a Python number computed from shapes or number inputs in tensor code."""
    nums = s.numbers((int,))
    x = _t(s, _nonbool)
    if not nums or x is None:
        return None
    k = s.rng.choice(nums).name
    choices = ["{x} * {k}", "{x}[:{k}]", "torch.arange({k} % 5 + 1)", "{x}.sum({k} % {x}.dim())",
               "torch.zeros({k} % 4 + 1, 2)", "{x}.narrow(0, 0, {k} % {x}.shape[0] + 1)", "{x} + torch.tensor({k})",
               "{x}.roll({k})", "torch.full((2,), {k})"]
    if x.rank == 0:
        choices = [c for c in choices if "shape[0]" not in c and ":" not in c and "dim()" not in c]
    return f"{s.fresh()} = {s.rng.choice(choices).format(x=x.name, k=k)}"


def iterate(s: Scope):
    x = _t(s, lambda v: v.rank >= 1 and v.shape[0] <= 6)
    if x is None:
        return None
    choices = ["torch.stack([r * 2 for r in {x}])", "sum({x})", "[r.sum() for r in {x}][0]",
               "torch.stack([r + i for i, r in enumerate({x})])", "list({x})[-1]", "torch.cat([a for a, b in zip({x}, {x})])"]
    return f"{s.fresh()} = {s.rng.choice(choices).format(x=x.name)}"


def side_effect(s: Scope):
    nums = s.numbers((int, float))
    x = _t(s)
    choices = ["LOG.append(G)"]
    if nums:
        choices.append(f"LOG.append({s.rng.choice(nums).name})")
    if x is not None:
        choices.append(f"LOG.append({x.name}.shape)")
    return s.rng.choice(choices)


def formatting(s: Scope):
    """Python text of shapes and dtypes (str, repr, f-strings): user code formats them, e.g. in messages."""
    x = _t(s)
    if x is None:
        return None
    choices = ["str({x}.shape)", "f'{{{x}.shape}}'", "repr({x}.size())", "str({x}.dtype)", "f'{{{x}.dtype}}'",
               "str({x}.shape[-1:])", "f'{{{x}.dim()}}-{{{x}.numel()}}'"]
    return f"{s.fresh()} = {s.rng.choice(choices).format(x=x.name)}"


def grad_mode(s: Scope):
    x = _t(s, _float)
    if x is None:
        return None
    y = s.fresh()
    return f"with torch.no_grad():\n    {y} = {x.name} * 2"


OPS = [
    Op("unary", "elementwise", 6, unary),
    Op("binary", "elementwise", 6, binary),
    Op("scalar_binary", "elementwise", 4, scalar_binary),
    Op("global_branch", "outside state", 1, global_branch),
    Op("reduction", "reduction", 5, reduction),
    Op("view", "view", 6, view),
    Op("getitem", "indexing", 5, getitem),
    Op("setitem", "indexing", 2, setitem),
    Op("data_dependent", "data-dependent", 0.4, data_dependent),
    Op("matmul", "matmul", 3, matmul),
    Op("cat", "cat/stack", 3, cat),
    Op("creation", "creation", 3, creation),
    Op("inplace", "in-place", 5, inplace),
    Op("view_then_inplace", "in-place", 3, view_then_inplace),
    Op("number_arith", "numbers", 4, number_arith),
    Op("number_use", "numbers", 3, number_use),
    Op("iterate", "iteration", 0.5, iterate),
    Op("side_effect", "outside state", 0.5, side_effect),
    Op("formatting", "python", 0.5, formatting),
    Op("grad_mode", "grad mode", 0.5, grad_mode),
]


# --- composites run as one kernel (``--kernels``) ---------------------------------------------------------------

def _param(s: Scope, x, size: str) -> str:
    """A weight of ``size`` elements (an expression of the sizes: they change between calls) in ``x``'s dtype, that
    requires grad where the variable it is scaled by does."""
    y = _t(s, lambda v: v.is_float)
    scale = f"{y.name}.reshape(-1)[0].to({x.name}.dtype)" if y is not None else "1.0"
    return f"({scale} * torch.linspace(0.5, 1.5, {size}, dtype={x.name}.dtype))"


def _as_4d(x) -> str:
    return {4: "{x}", 3: "{x}[None]", 2: "{x}[None, None]"}.get(x.rank, "{x}.reshape(1, 1, 1, -1)").format(x=x.name)


def normalization(s: Scope):
    x = _t(s, lambda v: v.is_float and v.rank >= 1)
    if x is None:
        return None
    last, channels = _param(s, x, f"{x.name}.shape[-1]"), _param(s, x, f"{x.name}.shape[1]")
    # eps=0.1: a group of equal values (x[None].expand(2, ...), a cat of a tensor with itself) normalizes rounding
    # noise, which a small eps amplifies past any tolerance (0.1: by 3, not by 300)
    choices = [f"torch.nn.functional.layer_norm({{x}}, {{x}}.shape[-1:], {last}, {_param(s, x, f'{x.name}.shape[-1]')}, "
               "eps=0.1)",
               f"torch.nn.functional.rms_norm({{x}}, {{x}}.shape[-1:], {last}, eps=0.1)",
               f"torch.nn.functional.group_norm({{x}}, 1, {channels}, {_param(s, x, f'{x.name}.shape[1]')}, eps=0.1)",
               "torch.nn.functional.group_norm({x}, {x}.shape[1], eps=0.1)",
               f"torch.nn.functional.batch_norm({{x}}, None, None, {channels}, None, training=True, eps=0.1)"]
    return f"{s.fresh()} = {s.rng.choice(choices).format(x=x.name)}"


def attention(s: Scope):
    x = _t(s, lambda v: v.is_float and v.rank >= 2)
    if x is None:
        return None
    q = _as_4d(x)
    others = [v for v in s.vars if v.is_tensor and v.dtype == x.dtype and v.rank == x.rank and v is not x]
    # keys and values of one length: eager's CPU flash kernel does not check it (it reads past the values)
    k = _as_4d(s.rng.choice(others)) if others and s.rng.random() < 0.5 else q
    choices = [f"torch.nn.functional.scaled_dot_product_attention({q}, {k}, {k})",
               f"torch.nn.functional.scaled_dot_product_attention({q}, {k}, {k}, is_causal=True)",
               f"torch.nn.functional.scaled_dot_product_attention({q}.mT, {k}.mT, {k}.mT, scale=0.5)",
               f"torch.nn.functional.scaled_dot_product_attention({q}, {q}, {q}, attn_mask=torch.ones("
               f"{q}.shape[-2], {q}.shape[-2], dtype=torch.bool).tril())"]
    return f"{s.fresh()} = {s.rng.choice(choices)}"


def convolution(s: Scope):
    x = _t(s, lambda v: v.is_float and v.rank in (3, 4))
    if x is None:
        return None
    c = f"{x.name}.shape[1]"
    if x.rank == 3:
        w = f"{_param(s, x, f'2 * {c} * 2')}.reshape(2, {c}, 2)"
        choices = [f"torch.nn.functional.conv1d({{x}}, {w}, {_param(s, x, '2')})",
                   f"torch.nn.functional.conv1d({{x}}, {w}, padding=1, stride=2)",
                   "torch.nn.functional.max_pool1d({x}, 2)", "torch.nn.functional.avg_pool1d({x}, 2)"]
    else:
        w = f"{_param(s, x, f'2 * {c} * 2')}.reshape(2, {c}, 1, 2)"
        choices = [f"torch.nn.functional.conv2d({{x}}, {w}, {_param(s, x, '2')})",
                   f"torch.nn.functional.conv2d({{x}}, {w}, padding=1)",
                   "torch.nn.functional.max_pool2d({x}, 2)", "torch.nn.functional.max_pool2d({x}, (1, 2), stride=1)",
                   "torch.nn.functional.avg_pool2d({x}, (2, 1))", "torch.nn.functional.adaptive_avg_pool2d({x}, 1)"]
    return f"{s.fresh()} = {s.rng.choice(choices).format(x=x.name)}"


def loss(s: Scope):
    x = _t(s, lambda v: v.is_float and v.rank == 2)
    if x is None:
        return None
    target = "torch.arange({x}.shape[0]) % {x}.shape[1]"
    choices = [f"torch.nn.functional.cross_entropy({{x}}, {target})",
               f"torch.nn.functional.cross_entropy({{x}}, {target}, reduction='none')",
               f"torch.nn.functional.nll_loss({{x}}.log_softmax(1), {target}, reduction='sum')",
               "torch.nn.functional.embedding(torch.arange(3) % {x}.shape[0], {x})",
               "torch.nn.functional.gelu({x}, approximate='tanh')"]
    return f"{s.fresh()} = {s.rng.choice(choices).format(x=x.name)}"


KERNEL_OPS = [
    Op("normalization", "kernels", 3, normalization),
    Op("attention", "kernels", 2, attention),
    Op("convolution", "kernels", 2, convolution),
    Op("loss", "kernels", 2, loss),
]
