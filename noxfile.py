"""Every supported session: tests, the demo, benchmarks. The one entry point for developers and CI.

    nox -s tests          # the full CPU test suite on Python 3.11 (what .ci/run runs)
    nox -s interpreter    # the interpreter's torch-free tests on Python 3.10, 3.11, 3.12 and 3.13
    nox -s demo           # jit a small GPT on CPU and compare with eager
    nox -s benchmarks     # cache-hit overhead and trace time, written to benchmarks/results/
    nox -s triton         # the Triton executor's tests on CPU tensors under TRITON_INTERPRET=1, and every kernel
                          # they launch compiled ahead of time for sm_90 (H100/H200)
    nox -s transformers   # the real-model tests against older transformers releases (4.x and an early 5.x)
    nox -s inductor       # the TorchInductor fusion executor's tests on CPU (C++ kernels; needs g++)
    nox -s nvfuser        # the nvFuser executor without a GPU: availability, claims, regions and nvFuser programs
    nox -s cudnn          # the cuDNN attention executor without a GPU: availability and claim decisions
    nox -s fuzz -- --programs N --seed S [--cache ...] [--executors ...]   # differential fuzzer, thunder vs eager
    nox -s fuzz_triton -- --programs N --seed S                           # the same with the Triton executor first
    nox -s distributed    # DDP and FSDP2 models under thunder.jit on gloo process groups (2 and 4 CPU processes)
    nox -s docs           # run every code block of docs/*.md, then build the site (mkdocs build --strict) into site/
"""

from __future__ import annotations

import os
import shutil
import subprocess

import nox

nox.options.sessions = ["interpreter", "tests", "triton", "transformers", "inductor", "nvfuser", "cudnn", "distributed", "docs"]
nox.options.reuse_existing_virtualenvs = True
nox.options.default_venv_backend = "venv"

# torch is pinned to the CPU wheel available on the project's machines; a looser requirement would let pip
# fetch a CUDA build with gigabytes of dependencies.
TORCH = os.environ.get("THUNDER_TORCH_REQUIREMENT", "torch==2.13.0")
CORE = "packages/thunder-core"
EXAMPLE_PLUGIN = "examples/thunder-example-executor"
TRITON_PLUGIN = "packages/thunder-triton"
INDUCTOR_PLUGIN = "packages/thunder-inductor"
NVFUSER_PLUGIN = "packages/thunder-nvfuser"
CUDNN_PLUGIN = "packages/thunder-cudnn"
TRITON = os.environ.get("THUNDER_TRITON_REQUIREMENT", "triton==3.9.0")  # requires no torch: cannot replace the pin
# torch's OpInfo database (torch.testing._internal) imports these
OPINFO_REQUIREMENTS = ("expecttest", "numpy")
# litgpt for its GPT (tests/test_training_models.py), installed with --no-deps: its requirements would replace the
# pinned torch. litgpt.model imports lightning (and it lightning_utilities, torchmetrics) and psutil; PyYAML, tqdm,
# packaging, fsspec and typing_extensions come with transformers and torch.
LITGPT_REQUIREMENTS = ("litgpt==0.5.13", "lightning==2.6.6", "lightning-utilities==0.15.3", "torchmetrics==1.9.0",
                       "psutil==7.2.2")

# transformers releases the real-model tests support: `tests` runs the newest, `transformers` the oldest 4.x and an
# early 5.x (5.0-5.3 reached output-capturing state through a global registry dict, 4.x has other code paths: T5's
# dtype property, data-dependent MoE routing) and the release before the newest (5.24 moved the KV cache argument with
# kwargs.pop, 5.23 did not). transformers does not depend on torch, so the pin holds.
TRANSFORMERS_NEWEST = "5.24.0"
TRANSFORMERS_OLDER = ("4.52.4", "5.3.0", "5.23.0")
MODEL_TESTS = ("tests/test_transformers_models.py", "tests/test_training_models.py", "tests/test_generation.py")


INTERPRETER_PYTHONS = ("3.10", "3.11", "3.12", "3.13")


def _find_python(version: str) -> str | None:
    """An interpreter for ``version``: on PATH if it answers, else pyenv's installed one."""
    for candidate in (shutil.which(f"python{version}"), _pyenv_python(version)):
        if candidate and subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    return None


def _pyenv_python(version: str) -> str | None:
    if shutil.which("pyenv") is None:
        return None
    installed = subprocess.run(["pyenv", "versions", "--bare"], capture_output=True, text=True).stdout.split()
    matches = sorted((v for v in installed if v == version or v.startswith(version + ".")), reverse=True)
    if not matches:
        return None
    prefix = subprocess.run(["pyenv", "prefix", matches[0]], capture_output=True, text=True).stdout.strip()
    return os.path.join(prefix, "bin", f"python{version}")


def _install_core(session: nox.Session, *extra: str) -> None:
    session.install(TORCH)
    # --no-deps for our packages so that no requirement can replace the pinned torch
    session.install("pluggy>=1.3", "pytest>=8", *extra)
    session.install("--no-deps", "-e", CORE)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """Unit tests of every package and the cross-package tests, with the example plugin installed."""
    _install_core(session, *OPINFO_REQUIREMENTS, f"transformers=={TRANSFORMERS_NEWEST}")  # real models
    session.install("--no-deps", "-e", EXAMPLE_PLUGIN)
    session.install("--no-deps", *LITGPT_REQUIREMENTS)
    # the float32 OpInfo conformance runs here; its heavier dtype variants (marked slow) run in `nox -s opinfo`
    session.run("pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", f"{CORE}/tests", "tests", *session.posargs)


@nox.session(python="3.11")
def distributed(session: nox.Session) -> None:
    """DDP and FSDP2 models under thunder.jit against eager on gloo process groups: litgpt's GPT and HF's Llama on 2
    processes, and a 4-process run (about 2 minutes on 2 cores). The small 2-process test also runs in `tests`."""
    _install_core(session, f"transformers=={TRANSFORMERS_NEWEST}")
    session.install("--no-deps", *LITGPT_REQUIREMENTS)
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/distributed", *session.posargs)


@nox.session(python="3.11")
@nox.parametrize("version", TRANSFORMERS_OLDER)
def transformers(session: nox.Session, version: str) -> None:
    """The real-model tests (HF models' forward and training against eager) with an older transformers release;
    `tests` runs them with the newest. CI runs both, a few minutes each."""
    _install_core(session, f"transformers=={version}")
    session.run("pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", *MODEL_TESTS, *session.posargs)


@nox.session(python="3.11")
def opinfo(session: nox.Session) -> None:
    """PyTorch's OpInfo database through thunder.jit vs eager, every dtype variant, forward and gradients; prints
    "N of M OpInfos pass forward in float32 (K through torch-language symbols, F through the opaque fallback)" and
    "N of M differentiable OpInfos match eager gradients (K by thunder's rules, I through the PyTorch-autograd fallback)"."""
    _install_core(session, *OPINFO_REQUIREMENTS)
    session.run("pytest", "-q", "-p", "no:cacheprovider", f"{CORE}/tests/torch/test_opinfo_conformance.py",
                f"{CORE}/tests/grad/test_grad_conformance.py", *session.posargs)


@nox.session(python=False)
def interpreter(session: nox.Session) -> None:
    """The bytecode interpreter imports no torch: its tests run on every supported Python (3.10 to 3.13).

    Interpreters are found on PATH or through pyenv (whose shims hide unselected versions from nox)."""
    for version in INTERPRETER_PYTHONS:
        python = _find_python(version)
        if python is None:
            session.error(f"Python {version} not found (install it, e.g. with pyenv)")
        venv = os.path.join(".nox", f"interpreter-py{version}")
        if not os.path.exists(os.path.join(venv, "bin", "python")):
            session.run(python, "-m", "venv", venv, external=True)
        venv_python = os.path.join(venv, "bin", "python")
        session.run(venv_python, "-m", "pip", "install", "--quiet", "pytest>=8", external=True)
        session.run(venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{CORE}/tests/interpreter",
                    *session.posargs, env={"PYTHONPATH": f"{CORE}/src"}, external=True)


@nox.session(python="3.11")
def demo(session: nox.Session) -> None:
    """Jit a small GPT-style model on CPU, check it against eager, print the final trace and timings."""
    _install_core(session)
    session.run("python", "examples/demo.py", *session.posargs)


@nox.session(python="3.11")
def benchmarks(session: nox.Session) -> None:
    """Per-call overhead of eager vs thunder.jit (and torch.compile), first-call and trace times, optimizer steps,
    saved bytes, training steps of small models and where the GPT step's time goes; JSON results."""
    _install_core(session, "transformers")  # the training-step benchmark's HF Llama and litgpt models
    session.install("--no-deps", *LITGPT_REQUIREMENTS)
    session.run("python", "benchmarks/overhead.py", *session.posargs)
    session.run("python", "benchmarks/optimizer_step.py")
    session.run("python", "benchmarks/saved_for_backward.py")
    session.run("python", "benchmarks/training_step.py")
    session.run("python", "benchmarks/step_profile.py")  # where the GPT step's time goes: the ceiling on CPU
    session.run("python", "benchmarks/moe_routing.py")


@nox.session(python="3.11")
def moe(session: nox.Session) -> None:
    """Mixture-of-experts acceptance (docs/values-from-tensor-data.md): Mixtral, Qwen2-MoE and litgpt's LLaMAMoE
    train 3 AdamW steps like eager, their routing split where it reads tensor data (about 1 minute)."""
    _install_core(session, f"transformers=={TRANSFORMERS_NEWEST}")
    session.install("--no-deps", *LITGPT_REQUIREMENTS)
    session.run("pytest", "-q", "-p", "no:cacheprovider", "-s", "tests/test_moe_models.py", *session.posargs)


@nox.session(python="3.11")
def triton(session: nox.Session) -> None:
    """The Triton executor (packages/thunder-triton), without a GPU. Checks two things:

    1. its kernels compute what eager PyTorch computes: they run on CPU tensors with Triton's interpreter
       (TRITON_INTERPRET=1), forward and backward, in float32, float16 and bfloat16;
    2. every kernel those tests launched compiles for an H100/H200 (sm_90) ahead of time, as a GPU launch with
       the same arguments and the GPU's block sizes would compile it, down to a cubin with the triton wheel's
       ptxas, and fits sm_90's shared memory and registers (test_sm90_compile.py). Prints
       "N kernels compiled for sm_90 (...)"; a kernel the compiler rejects fails the session.

    On a machine with a CUDA GPU the same tests run real kernels on CUDA tensors instead: benchmarks/gpu_session.sh."""
    _install_core(session, *OPINFO_REQUIREMENTS)
    session.install(TRITON)
    session.install("--no-deps", "-e", TRITON_PLUGIN)
    session.log("checks: the Triton executor's kernels against eager under TRITON_INTERPRET=1, and every kernel "
                "they launch compiled ahead of time for sm_90 (summary line at the end)")
    session.run("pytest", "-q", "-p", "no:cacheprovider", f"{TRITON_PLUGIN}/tests", *session.posargs,
                env={"TRITON_INTERPRET": "1"})


@nox.session(python="3.11")
def inductor(session: nox.Session) -> None:
    """The TorchInductor fusion executor (packages/thunder-inductor) on CPU: its compiled regions against eager
    PyTorch (outputs, gradients, in-place updates, symbolic sizes, a GPT block, an Adam step). Inductor compiles
    C++ kernels, which is slow on a cold cache (about 1.5 min on 2 cores; Inductor's cache directory is kept
    between runs); CI runs it. Without a C++ compiler the executor reports itself
    unavailable and only the availability tests run."""
    _install_core(session)
    session.install("--no-deps", "-e", INDUCTOR_PLUGIN)
    session.run("pytest", "-q", "-p", "no:cacheprovider", f"{INDUCTOR_PLUGIN}/tests", *session.posargs)


@nox.session(python="3.11")
def nvfuser(session: nox.Session) -> None:
    """The nvFuser executor (packages/thunder-nvfuser) without a GPU, where nvFuser cannot even be imported: its
    availability reasons, what it claims and why not, and the regions and nvFuser programs it forms on traces of fake
    CUDA tensors (a GPT block forward and backward, Adam steps, symbolic sizes). Its GPU tests skip with the reason;
    on a GPU machine: benchmarks/gpu_session.sh nvfuser-tests. Installed with --no-deps: no nvFuser wheel is needed."""
    _install_core(session)
    session.install("--no-deps", "-e", NVFUSER_PLUGIN)
    session.run("pytest", "-q", "-p", "no:cacheprovider", "-ra", f"{NVFUSER_PLUGIN}/tests", *session.posargs)


@nox.session(python="3.11")
def cudnn(session: nox.Session) -> None:
    """The cuDNN attention executor (packages/thunder-cudnn) without a GPU: its availability reasons and its claim
    decisions (the table, and traces of fake CUDA tensors). Its GPU tests skip with the reason; on a GPU machine:
    benchmarks/gpu_session.sh cudnn. Installed with --no-deps: neither the cuDNN frontend nor cuda-python is needed."""
    _install_core(session)
    session.install("--no-deps", "-e", CUDNN_PLUGIN)
    session.run("pytest", "-q", "-p", "no:cacheprovider", "-ra", f"{CUDNN_PLUGIN}/tests", *session.posargs)


@nox.session(python="3.11")
def fuzz(session: nox.Session) -> None:
    """The differential fuzzer (thunder.testing.fuzz; docs/fuzzing.md): random small programs, thunder.jit vs eager
    under every cache option, e.g. ``nox -s fuzz -- --programs 1000 --seed 0``. Exits non-zero on any mismatch or
    crash; ``--write-regressions tests/fuzz_regressions`` writes each failure kind's shrunk program as a test."""
    _install_core(session)
    session.install("--no-deps", "-e", EXAMPLE_PLUGIN)  # the executors the tests session runs with
    session.run("python", "-m", "thunder.testing.fuzz", *(session.posargs or ("--programs", "200", "--seed", "0")))


@nox.session(python="3.11")
def fuzz_triton(session: nox.Session) -> None:
    """The differential fuzzer with the Triton executor first, its kernels run by Triton's interpreter on CPU (which
    needs numpy)."""
    _install_core(session, "numpy")
    session.install(TRITON)
    session.install("--no-deps", "-e", TRITON_PLUGIN)
    session.run("python", "-m", "thunder.testing.fuzz", "--executors", "triton,torch,python",
                *(session.posargs or ("--programs", "100", "--seed", "0")), env={"TRITON_INTERPRET": "1"})


# the documentation site: MkDocs with the Material theme, mkdocstrings for the API reference (read from the source by
# griffe, nothing imported), matplotlib for the benchmark plot drawn at build time (docs/hooks/benchmarks.py)
DOCS_REQUIREMENTS = ("mkdocs==1.6.1", "mkdocs-material==9.8.1", "mkdocstrings[python]==1.0.8",
                     "mkdocstrings-python==2.0.11", "matplotlib==3.11.2",
                     "pygraphviz==2.0.4")  # lays out the trace pictures; its wheels bundle graphviz (no dot program)


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
    """Every code block of docs/*.md run as a test (docs/conftest.py; printed output compared where a page shows
    it), then the site built with ``mkdocs build --strict``: a broken link, a missing API reference or a warning
    fails. The site lands in site/ (``mkdocs serve`` to browse it while writing)."""
    _install_core(session, "--only-binary=pygraphviz", *DOCS_REQUIREMENTS)  # never pygraphviz's C build
    # the worked example of docs/executor-package.md, and the executor docs/inductor.md shows (C++ kernels, g++)
    session.install("--no-deps", "-e", EXAMPLE_PLUGIN, "-e", INDUCTOR_PLUGIN)
    # with the pictures' tests, which draw only where pygraphviz is installed (here)
    session.run("pytest", "-q", "-p", "no:cacheprovider", "docs", "tests/test_examine_graph.py", *session.posargs)
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", env={"NO_MKDOCS_2_WARNING": "1"})
