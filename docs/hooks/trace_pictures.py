"""MkDocs hook: pictures of the GPT example's forward and backward traces, drawn at build time.

A training step of ``examples/nanogpt.py``'s GPT (one layer, so the picture stays legible) runs under
``thunder.jit`` with the CPU fusion executor ``inductor`` where it is available, and ``thunder.examine.render_trace``
draws its final forward and backward traces into ``assets/gpt-forward.svg`` and ``assets/gpt-backward.svg``. A
page holding the line ``<!-- trace pictures -->`` gets, in its place, the two pictures and what they were made from.
So the pictures always show what the current code does.
"""

from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- trace pictures -->"
PICTURES = {"forward": "assets/gpt-forward.svg", "backward": "assets/gpt-backward.svg"}
CONFIG = {"n_layer": 1, "n_head": 2, "n_embd": 32, "block_size": 16, "vocab_size": 64}
BATCH, TOKENS = 2, 8


def _executors() -> list[str]:
    """The CPU fusion executor where this machine can compile its regions (it needs a C++ compiler), else none."""
    from thunder.extend import get_executor

    inductor = get_executor("inductor")
    return ["inductor"] if inductor is not None and inductor.availability()[0] else []


def gpt_traces(executors: list[str]) -> dict:
    """{'forward': final forward trace, 'backward': final backward trace} of one training step of the GPT."""
    import torch

    import thunder

    if str(ROOT / "examples") not in sys.path:  # once, though `mkdocs serve` rebuilds
        sys.path.insert(0, str(ROOT / "examples"))
    from nanogpt import GPT, GPTConfig

    torch.manual_seed(0)
    model = GPT(GPTConfig(**CONFIG))
    idx, targets = (torch.randint(0, CONFIG["vocab_size"], (BATCH, TOKENS)) for _ in range(2))
    jmodel = thunder.jit(model, executors=executors or None)
    _, loss = jmodel(idx, targets)
    loss.backward()
    return {"forward": thunder.last_traces(jmodel)[-1], "backward": thunder.last_backward_traces(jmodel)[-1]}


def _description(executors: list[str], traces: dict) -> str:
    ran = sorted({b.sym.executor.name for t in traces.values() for b in t.bound_symbols if b.sym.executor})
    config = ", ".join(f"{k}={v}" for k, v in CONFIG.items())
    how = ("`executors=[\"inductor\"]`, so its fusion regions appear as clusters" if executors else
           "the default executors (this build's machine has no C++ compiler for `inductor`, so there are no fusion "
           "regions)")
    return (f"One training step of `examples/nanogpt.py`'s `GPT({config})` on a batch of {BATCH}x{TOKENS} tokens, "
            f"with {how}; executors that ran operations: {', '.join(f'`{n}`' for n in ran)}. Drawn when this site "
            f"was built by `docs/hooks/trace_pictures.py`. Click a picture to open it full size.")


_state: dict = {}


# MkDocs events ------------------------------------------------------------------------------------------------
def on_files(files, config):
    from mkdocs.structure.files import File

    from thunder.examine import render_trace

    executors = _executors()
    with warnings.catch_warnings():  # torch's own deprecation notices on import are not the site's concern
        warnings.simplefilter("ignore", DeprecationWarning)
        traces = gpt_traces(executors)
    with tempfile.TemporaryDirectory() as directory:
        for name, path in PICTURES.items():
            svg = render_trace(traces[name], Path(directory) / f"{name}.svg")
            files.append(File.generated(config, path, content=svg.read_bytes()))
    _state["description"] = _description(executors, traces)
    return files


def on_page_markdown(markdown, page, config, files):
    if MARKER not in markdown:
        return markdown
    # each picture fits the page (an overview of its regions and colours) and links to itself at full size
    pictures = "\n\n".join(f'**The {name}.**\n\n[![The GPT {name} trace]({path}){{ style="max-height: 48em" }}]'
                             f"({path})" for name, path in PICTURES.items())
    return markdown.replace(MARKER, f"{_state['description']}\n\n{pictures}")
