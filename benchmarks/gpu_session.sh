#!/usr/bin/env bash
# Issue 17's GPU work in one command on a GPU machine (H100/H200, from the repository root):
#
#   benchmarks/gpu_session.sh tests   # the Triton test suite on CUDA tensors with real kernels (float32, float16,
#                                     # bfloat16: fusion, OpInfos, GPT block forward/backward, Adam/AdamW steps)
#   benchmarks/gpu_session.sh bench   # roofline (layer_norm, rms_norm, softmax, cross-entropy), GPT-2-small block,
#                                     # Adam/AdamW step, litgpt Llama-style training step: eager vs torch.compile
#                                     # vs thunder+triton, CUDA events, JSON with device, versions and date
#   benchmarks/gpu_session.sh all     # both, with smaller time budgets (one device call of 10 minutes)
#   benchmarks/gpu_session.sh nvfuser-tests  # issue 19: the nvFuser executor's tests (OpInfo subset, GPT block, Adam
#                                            # in place, symbolic sizes, layouts)
#   benchmarks/gpu_session.sh nvfuser-bench  # nvfuser_block.py, nvfuser_adam.py, nvfuser_llama.py
#   benchmarks/gpu_session.sh cudnn          # issue 18: the cuDNN executor's SDPA tests and cudnn_sdpa.py
#
# nvFuser and the cuDNN frontend are not on the GPU machine: benchmarks/gpu_prepare.sh packs them into .gpu/ (carry
# it too); .gpu/setup.sh installs them there and sets THUNDER_NVFUSER_PRELOAD (../shared/gpu/README.md).
#
# Results go to $OUT (the device tool's folder; default benchmarks/results/gpu-<date>): env.txt, tests.log,
# bench.log and one JSON per benchmark (at most 8 files, as the device tool returns them). Each stage runs
# under its own timeout, so a slow stage cannot cost the others their figures. Prepare the wheels the GPU
# machine lacks first, on a CPU machine: benchmarks/gpu_prepare.sh (then carry .whl).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=${1:-all}
OUT=${OUT:-$ROOT/benchmarks/results/gpu-$(date -u +%F)}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
unset TRITON_INTERPRET  # real kernels: the tests' conftest picks CUDA tensors when a GPU is present
PY=python3

case "$MODE" in
  tests) T_TESTS=560 ;;
  bench) T_ROOF=110 T_BLOCK=110 T_ADAM=140 T_LLAMA=200 ;;
  all) T_TESTS=190 T_ROOF=60 T_BLOCK=70 T_ADAM=70 T_LLAMA=110 ;;  # ~520 s with setup: inside a 600 s call
  nvfuser-tests) T_NVF_TESTS=520 ;;
  nvfuser-bench) T_NVF_BLOCK=140 T_NVF_ADAM=140 T_NVF_LLAMA=240 ;;
  cudnn) T_CUDNN_TESTS=220 T_CUDNN_SDPA=260 ;;
  *) echo "usage: $0 [tests|bench|all|nvfuser-tests|nvfuser-bench|cudnn]"; exit 2 ;;
esac

# --- setup: carried wheels, then our packages (their entry points are how thunder finds the triton executor)
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
if [[ -f .gpu/setup.sh ]]; then  # nvFuser (with its preload shim) and the cuDNN frontend: ../shared/gpu/README.md
  source .gpu/setup.sh > "$OUT/gpu-setup.txt" 2>&1
  cat "$OUT/gpu-setup.txt"
fi
PACKAGES=(packages/thunder-core packages/thunder-triton packages/thunder-nvfuser packages/thunder-cudnn)
if ! $PY -m pip install -q --no-index --no-deps --no-build-isolation "${PACKAGES[@]/#/-e}" \
  > "$OUT/setup.txt" 2>&1; then
  # no network there: if the local build fails, put the sources on the path and declare their entry points by
  # hand (dist-info folders written from each pyproject.toml), which is all thunder needs to find its plugins
  echo "pip install -e failed (above); using the sources with entry points written by hand" >> "$OUT/setup.txt"
  cat "$OUT/setup.txt"
  mkdir -p /tmp/site
  export PYTHONPATH=/tmp/site:$ROOT/packages/thunder-core/src:$ROOT/packages/thunder-triton/src:$ROOT/packages/thunder-nvfuser/src:$ROOT/packages/thunder-cudnn/src${PYTHONPATH:+:$PYTHONPATH}
  $PY - <<'EOF'
import pathlib, tomllib
for pkg in ("packages/thunder-core", "packages/thunder-triton", "packages/thunder-nvfuser", "packages/thunder-cudnn"):
    project = tomllib.loads(pathlib.Path(pkg, "pyproject.toml").read_text())["project"]
    info = pathlib.Path("/tmp/site", f"{project['name'].replace('-', '_')}-{project['version']}.dist-info")
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
        for group, eps in project.get("entry-points", {}).items()))
EOF
fi
{
  date -u; nvidia-smi; $PY - <<'EOF'
import torch, triton, thunder, thunder_triton
from thunder.extend import get_executor
print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)
print("thunder", thunder.__file__, "thunder_triton", thunder_triton.__file__)
for name in ("triton", "nvfuser", "cudnn"):
    ex = get_executor(name)
    print(name, "executor availability:", None if ex is None else ex.availability(), "version:", ex and ex.version)
print("device:", torch.cuda.get_device_name(), torch.cuda.get_device_capability())
EOF
  cat "$OUT/setup.txt"
} > "$OUT/env.txt" 2>&1
rm -f "$OUT/setup.txt"
cat "$OUT/env.txt"

# --- tests: every Triton test on CUDA tensors; -n 8 compiles kernels in 8 processes at once; -v writes each
# result as it comes, so a run stopped by its timeout still says what passed and failed
if [[ -n "${T_TESTS:-}" ]]; then
  echo "== tests (timeout ${T_TESTS}s)"
  timeout "$T_TESTS" $PY -m pytest -v -p no:cacheprovider -n 8 -ra --durations=15 packages/thunder-triton/tests \
    tests/test_cuda_attention_backward.py \
    > "$OUT/tests.log" 2>&1
  echo "exit $?"
  grep -E "FAILED|ERROR" "$OUT/tests.log" | head -40
  tail -25 "$OUT/tests.log"
fi

# --- benchmarks, most informative first; each writes its JSON into $OUT as soon as it is done
if [[ -n "${T_ROOF:-}" ]]; then
  : > "$OUT/bench.log"
  for spec in "triton_roofline.py:$T_ROOF" "triton_block.py:$T_BLOCK" "triton_adam.py:$T_ADAM" "triton_llama.py:$T_LLAMA"; do
    script=${spec%%:*}; limit=${spec##*:}
    echo "== $script (timeout ${limit}s)" | tee -a "$OUT/bench.log"
    timeout "$limit" $PY "benchmarks/$script" --out "$OUT" >> "$OUT/bench.log" 2>&1
    echo "exit $?" >> "$OUT/bench.log"
  done
  grep -E "^==|^exit|speedups|copy rate|^op |^(layer_norm|rms_norm|softmax|cross_entropy) |wrote|error" "$OUT/bench.log"
fi
# --- issue 19: nvFuser; issue 18: cuDNN. Tests first (-v: a run stopped by its timeout still says what passed)
run_tests() {  # name, timeout, test folder
  echo "== $1 tests (timeout ${2}s)"
  timeout "$2" $PY -m pytest -v -p no:cacheprovider -n 8 -ra --durations=15 "$3" > "$OUT/$1-tests.log" 2>&1
  echo "exit $?"
  grep -E "FAILED|ERROR" "$OUT/$1-tests.log" | head -40
  tail -15 "$OUT/$1-tests.log"
}
run_bench() {  # script, timeout
  echo "== $1 (timeout ${2}s)" | tee -a "$OUT/bench.log"
  timeout "$2" $PY "benchmarks/$1" --out "$OUT" >> "$OUT/bench.log" 2>&1
  echo "exit $?" | tee -a "$OUT/bench.log"
}
if [[ -n "${T_NVF_TESTS:-}" ]]; then
  run_tests nvfuser "$T_NVF_TESTS" packages/thunder-nvfuser/tests
fi
if [[ -n "${T_NVF_BLOCK:-}" ]]; then
  run_bench nvfuser_block.py "$T_NVF_BLOCK"
  run_bench nvfuser_adam.py "$T_NVF_ADAM"
  run_bench nvfuser_llama.py "$T_NVF_LLAMA"
  grep -E "speedups|over_floor|error|unavailable|Error" "$OUT/bench.log" | head -30
fi
if [[ -n "${T_CUDNN_TESTS:-}" ]]; then
  run_tests cudnn "$T_CUDNN_TESTS" packages/thunder-cudnn/tests
  run_bench cudnn_sdpa.py "$T_CUDNN_SDPA"
  grep -E "over eager flash|error|unavailable|Error" "$OUT/bench.log" | head -20
fi
ls -la "$OUT"
