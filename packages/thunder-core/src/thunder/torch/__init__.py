"""The torch language: torch functions, Tensor methods and torch.nn.functional as thunder symbols.

Each symbol has PyTorch's signature and validates inputs the way PyTorch does; its meta is a
decomposition into prims. ``thunder.torch.sin`` is the symbol for ``torch.sin`` and
``torch.Tensor.sin``. Import order matters only in that registry comes first.
"""

from thunder.torch import (  # noqa: F401
    conversions,
    creation,
    elementwise,
    indexing,
    linalg,
    nn_functional,
    randomness,
    reductions,
    scalars,
    sequences,
    shape_ops,
    views,
)
from thunder.torch.registry import language_symbols, torchsymbol  # noqa: F401

# isort: off
# Order matters here: in-place forms wrap the symbols above, and foreach forms wrap both.
from thunder.torch import inplace  # noqa: E402,F401
from thunder.torch import foreach  # noqa: E402,F401
from thunder.torch import data_dependent  # noqa: E402,F401
from thunder.torch import leaving_the_trace  # noqa: E402,F401
# isort: on

# Re-export every language symbol as thunder.torch.<name> (printed traces call ltorch.<name>).
for _name, _sym in list(language_symbols.items()):
    globals()[_name] = _sym
del _name, _sym


def to_torch_dtype(dtype):
    """A thunder dtype (or Python number type) as a torch dtype; a torch dtype and None pass through."""
    from thunder.core.dtypes import to_torch_dtype as convert

    return convert(dtype)


def to_thunder_dtype(dtype):
    """A torch dtype (or a dtype name) as a thunder dtype; a thunder dtype and None pass through."""
    from thunder.core.dtypes import to_dtype

    return to_dtype(dtype)
