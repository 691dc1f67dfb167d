"""Compiling generated kernels ahead of time for a GPU target, with no GPU present.

Triton's interpreter (``TRITON_INTERPRET=1``, how the tests run on CPU) accepts programs that the GPU
compiler rejects: a block past the compiler's size limit, a dtype or an op the GPU backend lacks, a call of
a plain Python function. ``KernelRecorder`` watches region launches and notes, per distinct launch, what a
GPU launch with the same arguments would compile: Triton's own specialization of the arguments (types,
16-byte alignment, integers equal to 1 made constants) with the block sizes and warps the launcher picks on
a GPU, not the interpreter's. ``compile_jobs`` compiles each for a target (sm_90 by default) down to a cubin
with the ptxas that ships in the triton wheel, and checks what a launch on that GPU would check: shared
memory and registers per block.

The compiling runs in subprocesses without ``TRITON_INTERPRET``: a process that set it got interpreted
versions of ``triton.language``'s own jit functions (the combine functions of ``tl.sum``, ``tl.max``) when
triton was imported, and the compiler cannot use those.

The specialization comes from Triton's argument binder (``create_function_from_signature``,
``JITFunction._pack_args``), the code a real launch runs, so the check compiles exactly what a GPU would.
Both are internal to Triton, which is why the triton version is pinned where this runs (noxfile.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile

__all__ = ["CompileJob", "CompileResult", "CompilerPool", "KernelRecorder", "compile_jobs", "gpu_function",
           "job_for_launch", "LIMITS"]

# per compute capability: (most shared memory a block may use with the opt-in, registers per block), as the
# CUDA programming guide's table of compute capabilities gives them
LIMITS = {80: (166912, 65536), 86: (101376, 65536), 89: (101376, 65536), 90: (232448, 65536)}


def sm_90():
    from triton.backends.compiler import GPUTarget

    return GPUTarget("cuda", 90, 32)


@dataclasses.dataclass(frozen=True)
class CompileJob:
    """One kernel as a GPU launch would compile it."""

    name: str
    path: str  # the kernel's source file
    signature: dict  # argument name -> Triton type ("*fp32", "i32", "constexpr", ...)
    constexprs: dict  # (argument index,) -> value
    attrs: dict  # (argument index,) -> specialization attributes (16-byte divisibility)
    options: tuple  # (("num_warps", 4), ...)

    def key(self) -> tuple:
        return (self.name, repr(sorted(self.signature.items())), repr(sorted(self.constexprs.items())),
                repr(sorted(self.attrs.items())), self.options)

    def describe(self) -> str:
        args = ", ".join(f"{k}: {v}" for k, v in self.signature.items() if v != "constexpr")
        consts = ", ".join(f"{k}={v}" for k, v in self.constexprs_by_name().items())
        return f"{self.name}({args}; {consts}; {', '.join(f'{k}={v}' for k, v in self.options)}) [{self.path}]"

    def constexprs_by_name(self) -> dict:
        names = list(self.signature)
        return {names[k[0]]: v for k, v in self.constexprs.items()}

    def to_json(self) -> dict:
        return dict(name=self.name, path=self.path, signature=self.signature,
                    constexprs=[[list(k), v] for k, v in self.constexprs.items()],
                    attrs=[[list(k), v] for k, v in self.attrs.items()], options=[list(o) for o in self.options])

    @classmethod
    def from_json(cls, d: dict) -> CompileJob:
        return cls(d["name"], d["path"], d["signature"], {tuple(k): v for k, v in d["constexprs"]},
                   {tuple(k): v for k, v in d["attrs"]}, tuple(tuple(o) for o in d["options"]))


@dataclasses.dataclass(frozen=True)
class CompileResult:
    job: CompileJob
    error: str | None  # None when it compiled and fits the target
    registers: int = 0  # per thread
    local_bytes: int = 0  # per thread: spilled registers and local arrays
    shared_bytes: int = 0


_gpu_modules: dict[str, object] = {}  # source file -> its module, loaded with the interpreter off


@contextlib.contextmanager
def _interpreter_off():
    """``triton.jit`` reads ``TRITON_INTERPRET`` when it decorates a kernel."""
    from triton import knobs

    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        yield


def gpu_function(name: str, path: str):
    """The kernel ``name`` of the source file ``path`` as a ``triton.JITFunction`` (what a GPU compiles), also
    in a process that runs kernels with the interpreter: its module is loaded with the interpreter off."""
    module = _gpu_modules.get(path)
    if module is None:
        with _interpreter_off():
            spec = importlib.util.spec_from_file_location(f"thunder_triton_gpu_kernels.{len(_gpu_modules)}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        _gpu_modules[path] = module
    return getattr(module, name)


_backends: dict = {}
_binders: dict = {}  # (source file, kernel name, target) -> Triton's argument binder for that target


def _backend(target):
    from triton.compiler import make_backend

    if target not in _backends:
        _backends[target] = make_backend(target)
    return _backends[target]


def job_for_launch(name: str, path: str, args, options: dict, target=None) -> CompileJob:
    """What launching kernel ``name`` of ``path`` with ``args`` and ``options`` (constexprs and num_warps as
    keyword arguments) compiles on ``target``: Triton's specialization of these arguments."""
    from triton.runtime.jit import create_function_from_signature

    fn = gpu_function(name, path)
    backend = _backend(target or sm_90())
    binder = _binders.get((path, name, backend.target))
    if binder is None:
        binder = create_function_from_signature(fn.signature, fn.params, backend)
        _binders[path, name, backend.target] = binder
    bound, specialization, bound_options = binder(*args, **options)
    parsed, signature, constexprs, attrs = fn._pack_args(backend, dict(options), bound, specialization, bound_options)
    launch = tuple(sorted((k, v) for k, v in options.items() if k in parsed.__dict__))
    return CompileJob(name, path, signature, constexprs, attrs, launch)


class KernelRecorder:
    """A launch observer (``thunder_triton.launcher.observe_launches``) that keeps one ``CompileJob`` per
    distinct (kernel, specialization, options); given a ``CompilerPool``, it submits each new job at once, so
    the kernels compile while the program goes on."""

    def __init__(self, target=None, pool: CompilerPool | None = None):
        self.target = target or sm_90()
        self.pool = pool
        self.jobs: dict[tuple, CompileJob] = {}
        self.launches = 0

    def __call__(self, launcher, args, gpu_options: dict) -> None:
        self.launches += 1
        job = job_for_launch(launcher.name, launcher.path, args, gpu_options, self.target)
        if job.key() not in self.jobs:
            self.jobs[job.key()] = job
            if self.pool is not None:
                self.pool.submit(job)

    def results(self) -> list[CompileResult]:
        """The compile results of every recorded job (compiled in the pool, or now)."""
        return self.pool.results() if self.pool is not None else compile_jobs(self.jobs.values(), self.target)


_RESOURCES = re.compile(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def _resources(cubin: bytes) -> tuple[int, int]:
    """(registers, local bytes) per thread of a cubin's one function, read with the wheel's cuobjdump."""
    from triton.knobs import nvidia

    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        out = subprocess.run([nvidia.cuobjdump.path, "--dump-resource-usage", f.name], capture_output=True,
                             text=True, check=True).stdout
    found = _RESOURCES.search(out)
    if found is None:
        raise RuntimeError(f"cuobjdump printed no resource usage:\n{out}")
    regs, stack, _, local = map(int, found.groups())
    return regs, max(stack, local)


def compile_one(job: CompileJob, target) -> CompileResult:
    """Compiles one job in this process, which must not run kernels with the interpreter."""
    from triton.compiler import ASTSource
    from triton.compiler import compile as triton_compile

    try:
        fn = gpu_function(job.name, job.path)
        kernel = triton_compile(ASTSource(fn, job.signature, job.constexprs, job.attrs), target=target,
                                options=dict(job.options))
    except Exception as e:  # the compiler's message names the construct and the kernel's line
        return CompileResult(job, f"{type(e).__name__}: {e}")
    shared = kernel.metadata.shared
    threads = kernel.metadata.num_warps * target.warp_size
    max_shared, max_registers = LIMITS[target.arch]
    registers, local = _resources(kernel.asm["cubin"])
    error = None
    if shared > max_shared:
        error = f"needs {shared} bytes of shared memory; sm_{target.arch} has {max_shared} per block"
    elif registers * threads > max_registers:
        error = f"needs {registers} registers x {threads} threads; sm_{target.arch} has {max_registers} per block"
    return CompileResult(job, error, registers, local, shared)


MAX_WORKERS = 8  # each worker holds triton's compiler (~100 MB); more rarely pays on a test suite's few hundred kernels


def _workers() -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(cpus, MAX_WORKERS)


class CompilerPool:
    """Subprocesses (``python -m thunder_triton.aot``, without ``TRITON_INTERPRET``) that compile jobs as they
    are submitted, so compiling overlaps whatever the caller does meanwhile (the tests launching more
    kernels). Each reads one job per line on stdin and writes its results and its log to files, so no pipe
    can fill and block it."""

    def __init__(self, target=None, workers: int | None = None):
        self.target = target or sm_90()
        if self.target.backend != "cuda" or self.target.arch not in LIMITS:
            raise ValueError(f"thunder_triton.aot: CUDA targets sm_{sorted(LIMITS)} only, not {self.target}")
        self._tmp = tempfile.TemporaryDirectory(prefix="thunder_triton_aot_")
        self._jobs: list[list[CompileJob]] = []
        self._procs: list[subprocess.Popen] = []
        self._workers = workers or _workers()
        self._submitted = 0

    def _start(self) -> None:
        env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
        target = f"{self.target.backend}:{self.target.arch}:{self.target.warp_size}"
        k = len(self._procs)
        with open(self._file(k, "log"), "w") as log:
            self._procs.append(subprocess.Popen(
                [sys.executable, "-m", "thunder_triton.aot", target, self._file(k, "jsonl")],
                env=env, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, text=True))
        self._jobs.append([])

    def _file(self, worker: int, ext: str) -> str:
        return os.path.join(self._tmp.name, f"worker{worker}.{ext}")

    def submit(self, job: CompileJob) -> None:
        k = self._submitted % self._workers
        self._submitted += 1
        if k == len(self._procs):
            self._start()
        self._jobs[k].append(job)
        try:
            self._procs[k].stdin.write(json.dumps(job.to_json()) + "\n")
            self._procs[k].stdin.flush()
        except (BrokenPipeError, OSError):  # the worker died: results() reports it for each of its jobs
            pass

    def close(self) -> None:
        """Stops the workers without waiting for their results."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self._procs, self._jobs = [], []
        self._tmp.cleanup()

    def results(self) -> list[CompileResult]:
        """Waits for every submitted job; results in submission order. A worker that crashed fails its jobs."""
        by_worker = []
        for k, (jobs, proc) in enumerate(zip(self._jobs, self._procs)):
            with contextlib.suppress(BrokenPipeError, OSError):
                proc.stdin.close()
            proc.wait()
            done = []
            if os.path.exists(self._file(k, "jsonl")):
                with open(self._file(k, "jsonl")) as f:
                    done = [CompileResult(job, **json.loads(line)) for job, line in zip(jobs, f)]
            with open(self._file(k, "log")) as f:
                log = f.read()[-3000:]
            crash = f"the compiling process exited with {proc.returncode} before this kernel:\n{log}"
            by_worker.append(done + [CompileResult(job, crash) for job in jobs[len(done):]])
        self._tmp.cleanup()
        return [by_worker[i % self._workers][i // self._workers] for i in range(self._submitted)]


def compile_jobs(jobs, target=None, *, workers: int | None = None) -> list[CompileResult]:
    """Compiles every job for ``target`` (sm_90 by default) in ``workers`` subprocesses (one per CPU, at most
    MAX_WORKERS, by default); results in the order given. Never raises for a kernel that fails: its result carries the error."""
    pool = CompilerPool(target, workers)
    for job in jobs:
        pool.submit(job)
    return pool.results()


def main(argv=None) -> None:
    """``python -m thunder_triton.aot cuda:90:32 RESULTS.jsonl``: compiles the jobs read from stdin, one JSON
    object a line, writing one result a line (a ``CompilerPool`` worker)."""
    from triton.backends.compiler import GPUTarget

    target, results_path = argv or sys.argv[1:]
    backend, arch, warp_size = target.split(":")
    target = GPUTarget(backend, int(arch), int(warp_size))
    with open(results_path, "w") as out:
        for line in sys.stdin:
            result = compile_one(CompileJob.from_json(json.loads(line)), target)
            out.write(json.dumps({k: v for k, v in dataclasses.asdict(result).items() if k != "job"}) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
