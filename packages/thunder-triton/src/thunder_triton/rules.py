"""What the Triton executor fuses and how each prim is written in Triton: tables keyed by prim name.

Adding an op adds a row; nothing dispatches on names with if-chains. Operands in the templates are the
names of values already in their *compute* type (half precision is computed in float32), so a
template may repeat an operand freely.

Only what ``triton.language`` offers in every mode is used (the interpreter has no libdevice), so
functions missing there are written with the ones it has (tanh through exp, log10 through log).
"""

from __future__ import annotations

from thunder.core import dtypes

__all__ = ["ELEMENTWISE", "REDUCTIONS", "SHAPE_PRIMS", "DTYPES", "fusible_dtype", "constant_power"]

# thunder dtype -> (element type in memory, compute type in registers)
DTYPES = {
    dtypes.float32: ("tl.float32", "tl.float32"),
    dtypes.float16: ("tl.float16", "tl.float32"),
    dtypes.bfloat16: ("tl.bfloat16", "tl.float32"),
    dtypes.int64: ("tl.int64", "tl.int64"),
    dtypes.int32: ("tl.int32", "tl.int32"),
    dtypes.int16: ("tl.int16", "tl.int16"),
    dtypes.int8: ("tl.int8", "tl.int8"),
    dtypes.uint8: ("tl.uint8", "tl.uint8"),
    dtypes.bool8: ("tl.int1", "tl.int1"),
}
# float64 is left to PyTorch: Triton's float literals are float32, which would round constants silently.


def fusible_dtype(d) -> bool:
    return d in DTYPES


_F, _A = "float", "any"  # operand dtypes a template accepts: floating only, or any fusible dtype

# prim name -> (template, operand kinds accepted)
ELEMENTWISE = {
    "abs": ("tl.abs({0})", _A),
    "neg": ("(-{0})", _A),
    "exp": ("tl.exp({0})", _F),
    "exp2": ("tl.exp2({0})", _F),
    "expm1": ("(tl.exp({0}) - 1.0)", _F),
    "log": ("tl.log({0})", _F),
    "log1p": ("tl.log(1.0 + {0})", _F),
    "log2": ("tl.log2({0})", _F),
    "log10": ("(tl.log({0}) * 0.4342944819032518)", _F),
    "sin": ("tl.sin({0})", _F),
    "cos": ("tl.cos({0})", _F),
    "tan": ("(tl.sin({0}) / tl.cos({0}))", _F),
    "sinh": ("((tl.exp({0}) - tl.exp(-{0})) * 0.5)", _F),
    "cosh": ("((tl.exp({0}) + tl.exp(-{0})) * 0.5)", _F),
    # 1 - 2/(e^2x + 1) saturates to +-1 instead of overflowing to nan
    "tanh": ("(1.0 - 2.0 / (tl.exp(2.0 * {0}) + 1.0))", _F),
    "sqrt": ("tl.sqrt({0})", _F),
    "rsqrt": ("tl.rsqrt({0})", _F),
    "erf": ("tl.erf({0})", _F),
    "erfc": ("(1.0 - tl.erf({0}))", _F),
    "floor": ("tl.floor({0})", _F),
    "ceil": ("tl.ceil({0})", _F),
    "trunc": ("tl.where({0} >= 0, tl.floor({0}), tl.ceil({0}))", _F),
    # nan and signed zeros pass through unchanged, as torch.sign does
    "sign": ("tl.where({0} > 0, 1.0, tl.where({0} < 0, -1.0, {0}))", _F),
    "reciprocal": ("(1.0 / {0})", _F),
    "isnan": ("({0} != {0})", _F),
    "isinf": ("(tl.abs({0}) == float('inf'))", _F),
    "isfinite": ("(tl.abs({0}) < float('inf'))", _F),
    "logical_not": ("({0} == 0)", _A),
    "bitwise_not": ("(~{0})", "integer"),
    "add": ("({0} + {1})", _A),
    "sub": ("({0} - {1})", _A),
    "mul": ("({0} * {1})", _A),
    "div": ("({0} / {1})", _F),  # integer division rounds toward zero in prims.div: left to PyTorch
    "maximum": ("tl.maximum({0}, {1})", _A),
    "minimum": ("tl.minimum({0}, {1})", _A),
    "eq": ("({0} == {1})", _A),
    "ne": ("({0} != {1})", _A),
    "lt": ("({0} < {1})", _A),
    "le": ("({0} <= {1})", _A),
    "gt": ("({0} > {1})", _A),
    "ge": ("({0} >= {1})", _A),
    "bitwise_and": ("({0} & {1})", "integer"),
    "bitwise_or": ("({0} | {1})", "integer"),
    "bitwise_xor": ("({0} ^ {1})", "integer"),
    "where": ("tl.where({0}, {1}, {2})", _A),
}

# Powers with a constant exponent (what models write: x**2, x**0.5); other powers are left to PyTorch.
_POWERS = {2: "({0} * {0})", 3: "({0} * {0} * {0})", 1: "{0}", 0.5: "tl.sqrt({0})", -0.5: "tl.rsqrt({0})",
           -1: "(1.0 / {0})", -2: "(1.0 / ({0} * {0}))"}


def constant_power(exponent) -> str | None:
    """The template of ``x ** exponent`` for a constant exponent, or None."""
    if type(exponent) not in (int, float):
        return None
    return _POWERS.get(exponent)


# Reductions along one axis of a [XBLOCK, RBLOCK] block, keeping dims. ``{v}`` is the value (masked lanes
# already set to ``neutral``), ``{n}`` the number of reduced elements.
REDUCTIONS = {
    "sum": {"neutral": "0", "code": "tl.sum({v}, axis=1, keep_dims=True)"},
    "amax": {"neutral": "float('-inf')", "code": "tl.max({v}, axis=1, keep_dims=True)"},
    "amin": {"neutral": "float('inf')", "code": "tl.min({v}, axis=1, keep_dims=True)"},
    # two passes over the block in registers: the mean first, then the squared deviations (stable)
    "var": {"neutral": "0", "code": None},
}

# Shape prims a region can absorb (they only change how values are indexed).
SHAPE_PRIMS = frozenset({"broadcast_in_dim"})
