"""Fuzzer finding (seed 1041 of the first exploratory run, ``t1 //= 2`` on an input): augmented assignments whose
in-place dunder TensorProxy lacked fell back to the out-of-place operator, so the input silently kept its old
values. Every augmented assignment of a tensor, on an input and on a view of one, against eager."""

import pytest
import torch

import thunder

# statement -> dtypes it applies to
STATEMENTS = {"x += 3": "if", "x -= 3": "if", "x *= 3": "if", "x /= 3": "f", "x //= 3": "if", "x %= 3": "if",
              "x **= 2": "if", "x &= 3": "i", "x |= 3": "i", "x ^= 3": "i", "x <<= 1": "i", "x >>= 1": "i"}
DTYPES = {"i": torch.int64, "f": torch.float32}


def _cases():
    for statement, kinds in STATEMENTS.items():
        for kind in kinds:
            for through_view in (False, True):
                yield pytest.param(statement, DTYPES[kind], through_view,
                                   id=f"{statement}-{kind}-{'view' if through_view else 'input'}")


@pytest.mark.parametrize("statement, dtype, through_view", list(_cases()))
def test_augmented_assignment_updates_like_eager(statement, dtype, through_view):
    namespace = {}
    target = "x = t[1:]\n    " if through_view else "x = t\n    "
    exec(f"def fn(t):\n    {target}{statement}\n    return x * 1", namespace)
    fn = namespace["fn"]
    t = torch.tensor([[-5, 3, 4], [7, -1, 2]], dtype=dtype)
    eager_t, thunder_t = t.clone(), t.clone()
    expected = fn(eager_t)
    actual = thunder.jit(fn)(thunder_t)
    torch.testing.assert_close(actual, expected)
    torch.testing.assert_close(thunder_t, eager_t)
