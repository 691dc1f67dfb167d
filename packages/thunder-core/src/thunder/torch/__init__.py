"""The torch language: torch functions, Tensor methods and torch.nn.functional as thunder symbols.

Each symbol has PyTorch's signature and validates inputs the way PyTorch does; its meta is a
decomposition into prims. ``thunder.torch.sin`` is the symbol for ``torch.sin`` and
``torch.Tensor.sin``. Import order matters only in that registry comes first.
"""

from thunder.torch import (  # noqa: F401
    conversions,
    creation,
    elementwise,
    foreach,  # noqa: F401,E402  (after inplace: list forms of both)
    indexing,
    inplace,  # noqa: F401,E402  (last: its in-place forms wrap the symbols above)
    linalg,
    nn_functional,
    randomness,
    reductions,
    scalars,
    shape_ops,
)
from thunder.torch.registry import language_symbols, torchsymbol  # noqa: F401

# Re-export every language symbol as thunder.torch.<name> (printed traces call ltorch.<name>).
for _name, _sym in list(language_symbols.items()):
    globals()[_name] = _sym
del _name, _sym
