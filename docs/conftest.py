"""Every ```python block of docs/*.md runs as a test (``nox -s docs``; ``pytest docs``).

The blocks of a page run in order in one namespace, as a reader would paste them. A block followed by a
```text title="Output"``` block must print that text; the comparison ignores what differs between runs
(timings, object addresses, line numbers of the page) and ``...`` in the expected text matches anything, as in
doctest. A comment line right before a block states what it needs, and the block is skipped with the reason where
that is missing: ``<!-- requires: cuda -->``, ``<!-- requires: pygraphviz -->``, or an executor's name
(``<!-- requires: triton -->``). A line ``--8<-- "path"`` in a block is a file of the repository, shown by
pymdownx.snippets and run here.

``pytest docs --update-outputs`` writes what the blocks printed into the output blocks that do not match it (review
the diff before committing it). Only Python runs: ```bash blocks are commands for a shell (installing, nox sessions).
"""

from __future__ import annotations

import contextlib
import doctest
import io
import linecache
import re
from pathlib import Path

import pytest

FENCE = re.compile(r"^```(\S*)(.*)$")
REQUIRES = re.compile(r"^<!--\s*requires:\s*(\w+)\s*-->$")
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$')  # pymdownx.snippets: the block shows (and runs) a file of the repository
ROOT = Path(__file__).resolve().parents[1]
OUTPUT_INFO = 'title="Output"'


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


# what a block may require -> (is it there?, the reason a block is skipped without it)
def _pygraphviz() -> bool:
    import importlib.util

    return importlib.util.find_spec("pygraphviz") is not None


REQUIREMENTS = {
    "cuda": (_cuda, "needs a CUDA GPU"),
    "pygraphviz": (_pygraphviz, "needs pygraphviz (pip install pygraphviz) to lay out a picture"),
}


def _requirement(name: str) -> tuple[bool, str]:
    """(met?, why not): a name of REQUIREMENTS, or else an executor's name (installed and available)."""
    if name in REQUIREMENTS:
        available, reason = REQUIREMENTS[name]
        return available(), reason
    from thunder.extend import get_executor

    executor = get_executor(name)
    if executor is None:
        return False, f"needs the executor {name!r} (its package is not installed)"
    available, why = executor.availability()
    return available, f"needs the executor {name!r}: {why}"

# what differs from run to run, replaced on both sides before comparing
NORMALIZE = [
    (re.compile(r"took \d+(\.\d+)? ms"), "took N ms"),
    (re.compile(r"0x[0-9a-f]+"), "0xADDRESS"),
    (re.compile(r"(\.md):\d+:"), r"\1:N:"),
    (re.compile(r"_[0-9a-f]{8,}\b"), "_ID"),  # names of objects bound by id in generated code
]


class Block:
    def __init__(self, source: str, first_line: int, requires: str | None, index: int):
        self.source, self.first_line, self.requires, self.index = source, first_line, requires, index
        self.expected: str | None = None  # the text of the output block after it
        self.output_lines: tuple[int, int] | None = None  # [start, end) line numbers of that text


def parse_blocks(text: str) -> list[Block]:
    """The python blocks of a Markdown page, each with the output block right after it (blank lines between), if any."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i, previous, previous_end = 0, None, -1
    while i < len(lines):
        m = FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        lang, info = m.group(1), m.group(2)
        start = end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        body = "\n".join(_expand_snippet(line) for line in lines[start:end])
        adjacent = previous is not None and not any(line.strip() for line in lines[previous_end + 1:i])
        if lang == "python":
            req = REQUIRES.match(lines[i - 1].strip()) if i else None
            previous = Block(body, start + 1, req.group(1) if req else None, len(blocks))
            blocks.append(previous)
        else:
            if lang == "text" and OUTPUT_INFO in info and adjacent and previous.expected is None:
                previous.expected, previous.output_lines = body, (start, end)
            previous = None
        previous_end = i = end
        i += 1
    return blocks


def _expand_snippet(line: str) -> str:
    m = SNIPPET.match(line.strip())
    return (ROOT / m.group(1)).read_text().rstrip("\n") if m else line


def _normalize(text: str) -> str:
    for pattern, replacement in NORMALIZE:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def output_matches(expected: str, got: str) -> bool:
    checker = doctest.OutputChecker()
    return checker.check_output(_normalize(expected) + "\n", _normalize(got) + "\n", doctest.ELLIPSIS)


def pytest_addoption(parser):
    parser.addoption("--update-outputs", action="store_true",
                     help="write what each docs block printed into the page's output block")


def pytest_collect_file(file_path: Path, parent):
    if file_path.suffix == ".md" and file_path.parent == Path(__file__).parent:
        return MarkdownPage.from_parent(parent, path=file_path)
    return None


class MarkdownPage(pytest.File):
    def collect(self):
        text = self.path.read_text()
        self.namespace: dict = {"__name__": "__main__"}  # as in a script the reader runs
        self.updates: list[tuple[tuple[int, int], str]] = []
        # the page's own lines, so tracebacks and the traces' source comments show the page
        linecache.cache[self.path.name] = (len(text), None, text.splitlines(True), self.path.name)
        for block in parse_blocks(text):
            yield CodeBlock.from_parent(self, name=f"line {block.first_line}", block=block)


class CodeBlock(pytest.Item):
    def __init__(self, *, block: Block, **kwargs):
        super().__init__(**kwargs)
        self.block = block

    def runtest(self):
        block = self.block
        if block.requires is not None:
            met, reason = _requirement(block.requires)
            if not met:
                pytest.skip(reason)
        # blank lines first, so line numbers in tracebacks and traces are the page's
        code = compile("\n" * (block.first_line - 1) + block.source, self.parent.path.name, "exec")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, self.parent.namespace)
        got = out.getvalue()
        if block.expected is None:
            return
        if output_matches(block.expected, got):
            return
        if self.config.getoption("update_outputs"):
            _rewrite_output(self.parent.path, block, got)
        else:
            raise OutputMismatch(block.expected, got)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, OutputMismatch):
            e = excinfo.value
            return f"the block printed:\n{e.got}\nthe page shows:\n{e.expected}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.block.first_line - 1, f"{self.path.name}: the code block at line {self.block.first_line}"


class OutputMismatch(AssertionError):
    def __init__(self, expected: str, got: str):
        super().__init__("output differs")
        self.expected, self.got = expected, got


def _rewrite_output(path: Path, block: Block, got: str) -> None:
    """Replaces the output block's text with ``got``; earlier rewrites in this run shifted the lines, so the page's
    blocks are read again and this one found by its position."""
    lines = path.read_text().splitlines()
    blocks = parse_blocks("\n".join(lines))
    same = blocks[block.index]  # rewriting earlier outputs moved the lines, not the order of the blocks
    start, end = same.output_lines
    new = got.rstrip("\n").splitlines()
    path.write_text("\n".join(lines[:start] + new + lines[end:]) + "\n")
