"""The collector that runs the docs' code blocks (docs/conftest.py): which output belongs to which block, what a
requirement marker skips, and that a real difference in printed output fails while run-to-run noise does not."""

import importlib.util
import pathlib

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"
_spec = importlib.util.spec_from_file_location("docs_blocks", DOCS / "conftest.py")
blocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(blocks)

PAGE = '''# A page

```python
print(1)
```

```text title="Output"
1
```

Some prose.

<!-- requires: cuda -->
```python
print(2)
```

Prose between: the next output block belongs to no python block.

```text title="Output"
2
```

```bash
pip install thunder-core
```

```python
--8<-- "examples/thunder-example-executor/src/thunder_example_executor/__init__.py"
```
'''


def test_output_blocks_attach_only_right_after_their_python_block():
    first, second, snippet = blocks.parse_blocks(PAGE)
    assert (first.source, first.expected, first.requires) == ("print(1)", "1", None)
    assert (second.source, second.expected, second.requires) == ("print(2)", None, "cuda")
    assert first.first_line == 4 and first.output_lines == (7, 8)
    assert snippet.source.startswith('"""An example third-party Thunder executor')


def test_output_comparison_ignores_run_to_run_noise_but_not_values():
    expected = "# Constructed by Dead code elimination (took 0.04 ms)\n  # page.md:17: \tx = f(y)\nloss 1.23"
    assert blocks.output_matches(expected, expected.replace("0.04", "1.50").replace(":17:", ":20:"))
    assert not blocks.output_matches(expected, expected.replace("1.23", "1.24"))
    assert blocks.output_matches("a ... z", "a b c z")  # doctest's ellipsis
    assert not blocks.output_matches("a b", "a b\nc")


def test_unknown_requirement_names_an_executor():
    met, reason = blocks._requirement("no_such_executor")
    assert not met and reason == "needs the executor 'no_such_executor' (its package is not installed)"
