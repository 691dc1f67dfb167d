#!/usr/bin/env bash
# Issue 17's GPU work in one command on a GPU machine (H100/H200, from the repository root):
#
#   benchmarks/gpu_session.sh tests   # the Triton test suite on CUDA tensors with real kernels (float32, float16,
#                                     # bfloat16: fusion, OpInfos, GPT block forward/backward, Adam/AdamW steps)
#   benchmarks/gpu_session.sh bench   # roofline (layer_norm, rms_norm, softmax, cross-entropy), GPT-2-small block,
#                                     # Adam/AdamW step, litgpt Llama-style training step: eager vs torch.compile
#                                     # vs thunder+triton, CUDA events, JSON with device, versions and date
#   benchmarks/gpu_session.sh all     # both, with smaller time budgets (one device call of 10 minutes)
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
  *) echo "usage: $0 [tests|bench|all]"; exit 2 ;;
esac

# --- setup: carried wheels, then our packages (their entry points are how thunder finds the triton executor)
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
if ! $PY -m pip install -q --no-index --no-deps --no-build-isolation -e packages/thunder-core -e packages/thunder-triton \
  > "$OUT/setup.txt" 2>&1; then
  # no network there: if the local build fails, put the sources on the path and declare their entry points by
  # hand (dist-info folders written from each pyproject.toml), which is all thunder needs to find its plugins
  echo "pip install -e failed (above); using the sources with entry points written by hand" >> "$OUT/setup.txt"
  cat "$OUT/setup.txt"
  mkdir -p /tmp/site
  export PYTHONPATH=/tmp/site:$ROOT/packages/thunder-core/src:$ROOT/packages/thunder-triton/src${PYTHONPATH:+:$PYTHONPATH}
  $PY - <<'EOF'
import pathlib, tomllib
for pkg in ("packages/thunder-core", "packages/thunder-triton"):
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
print("triton executor availability:", get_executor("triton").availability())
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
ls -la "$OUT"
