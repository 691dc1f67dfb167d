#!/usr/bin/env bash
# On a CPU machine, from the repository root, before a GPU session: downloads the wheels the GPU machine lacks
# (it has no network) into .whl/, which gpu_session.sh installs there. .whl/ is kept out of git.
#   litgpt (benchmarks/triton_llama.py; its requirements are on the GPU image) and expecttest (torch's OpInfo
#   database imports it: packages/thunder-triton/tests/test_opinfo.py).
# Then, in the GPU session: run(command="benchmarks/gpu_session.sh tests", carry=[".whl"], timeout_s=600) and
# run(command="benchmarks/gpu_session.sh bench", carry=[".whl"], timeout_s=600); copy the JSON files it
# returns into benchmarks/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
exclude="$(git rev-parse --git-common-dir)/info/exclude"
grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >> "$exclude"
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl litgpt==0.5.13 expecttest==0.3.0
ls -la .whl
