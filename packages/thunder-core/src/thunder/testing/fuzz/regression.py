"""Writes a shrunk failing program out as a pytest file that compares thunder with eager (strict xfail until
the bug is fixed, so the file flips to a failure, and must be un-marked, once it passes)."""

from __future__ import annotations

import pathlib
import pprint
import re

from thunder.testing.fuzz.program import Program

__all__ = ["regression_test_source", "write_regression_test"]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(getattr(text, "value", text)).lower()).strip("_") or "default"


def regression_test_source(program: Program, calls: list, kind: str, cache=None, executors=None,
                           xfail: bool = True) -> str:
    cache_value = getattr(cache, "value", cache)
    source = "\n".join(f"#     {line}" if line else "#" for line in program.source().splitlines())
    marker = f"@pytest.mark.xfail(strict=True, reason={kind[:300]!r})\n" if xfail else ""
    imports = "import pytest\n\n" if xfail else ""  # a fixed kind's test drops the marker, and the import with it
    summary = kind[:200].replace('"', "'")  # a docstring cannot hold or end with a double quote
    return f'''"""Fuzzer regression (seed {program.seed}, cache={cache_value!r}): {summary}"""

{imports}from thunder.testing.fuzz.program import Call, NumberInput, Program, TensorInput  # noqa: F401
from thunder.testing.fuzz.runner import AGREEMENT, run_program

# The program, as the fuzzer prints it:
{source}
PROGRAM = {pprint.pformat(program, width=110, compact=True)}
CALLS = {calls!r}


{marker}def test_matches_eager():
    outcome = run_program(PROGRAM, cache={cache_value!r}, executors={executors!r}, calls=CALLS)
    assert outcome.cls in AGREEMENT, outcome.detail
'''


def write_regression_test(directory, program: Program, calls: list, kind: str, cache=None, executors=None,
                          xfail: bool = True) -> pathlib.Path:
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"test_fuzz_{program.seed}_{_slug(cache)}.py"
    path.write_text(regression_test_source(program, calls, kind, cache, executors, xfail))
    return path
