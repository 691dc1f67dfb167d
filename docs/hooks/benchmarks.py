"""MkDocs hook: the performance page's tables and plot, made from benchmarks/results/*.json at build time.

A page holding the line ``<!-- benchmark tables -->`` gets, in its place, one table per benchmark (its newest
recorded run, with the machine and date the run recorded), and the site gets ``assets/benchmarks.png``, a plot of
each run's time relative to eager PyTorch. So the figures on the site are the recorded ones, never copied by hand.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
MARKER = "<!-- benchmark tables -->"
PLOT = "assets/benchmarks.png"


def newest(benchmark: str, variant: str = "") -> tuple[Path, dict]:
    """The newest ``<benchmark>-<date><variant>.json`` run."""
    pattern = re.compile(rf"^{re.escape(benchmark)}-(\d{{4}}-\d\d-\d\d){re.escape(variant)}\.json$")
    runs = sorted((p for p in RESULTS.iterdir() if pattern.match(p.name)), key=lambda p: pattern.match(p.name).group(1))
    if not runs:
        raise FileNotFoundError(f"no {benchmark}-<date>{variant}.json in {RESULTS}")
    return runs[-1], json.loads(runs[-1].read_text())


def newest_recorded(benchmark: str, variant: str, recorded=lambda d: d["date"]) -> tuple[Path, dict]:
    """The ``<benchmark>-<date>[-<tag>]<variant>.json`` run whose recorded date (a UTC timestamp, ``recorded(run)``)
    is the latest: re-runs of one day are told apart by a tag (the lane that ran them), and the newest wins."""
    pattern = re.compile(rf"^{re.escape(benchmark)}-\d{{4}}-\d\d-\d\d(-[\w.-]+)?{re.escape(variant)}\.json$")
    runs = [(json.loads(p.read_text()), p) for p in RESULTS.iterdir() if pattern.match(p.name)]
    if not runs:
        raise FileNotFoundError(f"no {benchmark}-<date>[-<tag>]{variant}.json in {RESULTS}")
    d, path = max(runs, key=lambda r: recorded(r[0]))
    return path, d


def _table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _ratio(x) -> str:
    return f"{x:.2f}x" if x is not None else "-"


def _machine(m: dict, date: str) -> str:
    cpus = m.get("cpus") or m.get("cpu_count")
    threads = m.get("torch_threads")
    parts = [m.get("device") or m.get("processor") or "cpu", f"{cpus} cores" if cpus else None,
             f"torch threads {threads}" if threads else None, f"torch {m.get('torch')}" if m.get("torch") else None,
             f"python {m.get('python')}" if m.get("python") else None]
    return f"*Machine: {', '.join(p for p in parts if p)}; run {date[:16].replace('T', ' ')} UTC.*"


# one renderer per benchmark: (title, markdown, plot series {label: {case: time over eager}})
def training_step():
    path, d = newest("training-step")
    rows, series = [], {"thunder": {}, "torch.compile": {}}
    for r in d["results"]:
        rows.append([r["model"], f"{r['parameters']:,}", r["eager"]["step_ms"], r["torch.compile"]["step_ms"],
                     r["thunder"]["step_ms"], _ratio(r["thunder"]["over_eager"]), r["thunder"]["first_step_s"],
                     r["torch.compile"]["first_step_s"]])
        series["thunder"][r["model"]] = r["thunder"]["over_eager"]
        series["torch.compile"][r["model"]] = r["torch.compile"]["over_eager"]
    machine = dict(d["machine"], **d.get("versions", {}))
    text = "\n\n".join([
        f"Forward, backward and AdamW step, median ms (`benchmarks/training_step.py`, `{path.name}`).",
        _table(["model", "parameters", "eager ms", "torch.compile ms", "thunder ms", "thunder / eager",
                "thunder first step s", "torch.compile first step s"], rows),
        _machine(machine, d["date"])])
    return f"Training step ({d['date'][:10]})", text, series


def optimizer_step():
    path, d = newest("optimizer")
    rows, series = [], {"thunder": {}}
    for case, r in d["cases"].items():
        eager, compiled, thunder = r["eager"], r["torch.compile"], r["thunder"]
        rows.append([case, r["tensors"], f"{r['parameters']:,}", eager["step_ms"], compiled["step_ms"],
                     thunder["step_ms"], _ratio(thunder["over_eager"]), thunder["first_call_ms"]])
        series["thunder"][case] = thunder["over_eager"]
    text = "\n\n".join([
        f"`thunder.jit(optimizer.step)` vs eager and torch.compile, median ms per step (`benchmarks/optimizer_step.py`, "
        f"`{path.name}`).",
        _table(["optimizer", "tensors", "parameters", "eager ms", "torch.compile ms", "thunder ms", "thunder / eager",
                "thunder first call ms"], rows),
        _machine(d["machine"], d["date"])])
    return f"Optimizer step ({d['date'][:10]})", text, series


def generation():
    path, d = newest_recorded("generation", "", recorded=lambda d: d["machine"]["date"])
    rows, series = [], {"thunder": {}, "torch.compile": {}}
    cpu = "decode_cpu_ms_per_token" in d["cases"][next(iter(d["cases"]))]["eager"]  # recorded since 2026-11-24
    for case, r in d["cases"].items():
        for runner in (k for k in ("eager", "torch.compile", "thunder", "thunder+inductor") if k in r):
            x = r[runner]
            rows.append([case, runner, x["prefill_ms"], x["decode_ms_per_token"],
                         *([x["decode_cpu_ms_per_token"], _ratio(x.get("decode_cpu_over_eager", 1.0))] if cpu else []),
                         x["first_generation_s"], _ratio(x.get("decode_over_eager", 1.0))])
        ratio = "decode_cpu_over_eager" if cpu else "decode_over_eager"  # CPU time: less of the machine's load
        series["thunder"][case] = r["thunder"][ratio]
        series["torch.compile"][case] = r["torch.compile"][ratio]
    s = d["settings"]
    text = "\n\n".join([
        f"Greedy generation with a KV cache, prompt {s['prompt']} tokens, {s['new_tokens']} new tokens "
        f"(`benchmarks/generation.py`, `{path.name}`).",
        _table(["model", "runner", "prefill ms", "decode ms / token",
                *(["decode CPU ms / token", "decode CPU / eager"] if cpu else []), "first generation s",
                "decode / eager"], rows),
        *([f"*Run note: {s['note']}*"] if s.get("note") else []),
        _machine(d["machine"], d["machine"]["date"])])
    return f"Generation, decode per token ({d['machine']['date'][:10]})", text, series


def inductor_gpt():
    path, d = newest_recorded("inductor-gpt", "-warm-cache")
    rows, series = [], {"thunder": {}, "thunder+inductor": {}, "torch.compile": {}}
    for workload, runs in d["workloads"].items():
        eager = runs["eager"]["median_ms"]
        for runner, r in runs.items():
            rows.append([workload, runner, r["median_ms"], _ratio(r["median_ms"] / eager), r["first_call_s"]])
            if runner in series:
                series[runner][workload] = r["median_ms"] / eager
    versions = d["versions"]
    text = "\n\n".join([
        f"{d['model']}, the Inductor executor's fusion regions compiled with a warm Inductor cache "
        f"(`benchmarks/inductor_gpt.py`, `{path.name}`).",
        _table(["workload", "runner", "median ms", "over eager", "first call s"], rows),
        f"*Machine: {d['device']}; torch {versions['torch']}, python {versions['python']}; run "
        f"{d['date'][:16].replace('T', ' ')} UTC.*"])
    return f"nanoGPT with the Inductor executor ({d['date'][:10]})", text, series


def overhead():
    path, d = newest("overhead")
    rows = []
    for case, r in d["per_call"].items():
        rows.append([case, r["eager"]["median_us"], r["thunder"]["median_us"], r["thunder_symbolic"]["median_us"],
                     r["torch.compile"]["median_us"], d["first_call_ms"][case]["thunder"],
                     d["first_call_ms"][case]["torch.compile"]])
    text = "\n\n".join([
        f"Per-call time of small functions, where the cache check dominates (`benchmarks/overhead.py`, "
        f"`{path.name}`).",
        _table(["function", "eager µs", "thunder µs", "thunder symbolic values µs", "torch.compile µs",
                "thunder first call ms", "torch.compile first call ms"], rows),
        _machine(d["machine"], d["date"])])
    return f"Per-call overhead ({d['date'][:10]})", text, {}


BENCHMARKS = (training_step, optimizer_step, generation, inductor_gpt, overhead)


def tables() -> str:
    parts = []
    for render in BENCHMARKS:
        title, text, _ = render()
        parts.append(f"### {title}\n\n{text}")
    return "\n\n".join(parts)


def plot_png() -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(title, series) for title, _, series in (render() for render in BENCHMARKS) if series]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.6 * len(panels)), constrained_layout=True)
    colors = {"thunder": "#3f51b5", "thunder+inductor": "#009688", "torch.compile": "#ff9800"}
    for ax, (title, series) in zip(axes, panels):
        cases = list(next(iter(series.values())))
        height = 0.8 / len(series)
        for k, (label, values) in enumerate(series.items()):
            ys = [i + k * height for i in range(len(cases))]
            ax.barh(ys, [values[c] for c in cases], height=height, label=label, color=colors[label])
        ax.axvline(1.0, color="black", linewidth=1)
        ax.set_yticks([i + 0.4 - height / 2 for i in range(len(cases))], cases)
        ax.invert_yaxis()
        ax.set_title(f"{title}: time relative to eager, CPU (lower is faster)", fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


# MkDocs events ------------------------------------------------------------------------------------------------
def on_files(files, config):
    from mkdocs.structure.files import File

    files.append(File.generated(config, PLOT, content=plot_png()))
    return files


def on_page_markdown(markdown, page, config, files):
    if MARKER in markdown:
        return markdown.replace(MARKER, tables())
    return markdown
