#!/usr/bin/env bash
# On a CPU machine, from the repository root, before a GPU session: downloads the wheels the GPU machine lacks
# (it has no network) into .whl/, which gpu_session.sh installs there. .whl/ is kept out of git.
#   litgpt (benchmarks/triton_llama.py; its requirements are on the GPU image) and expecttest (torch's OpInfo
#   database imports it: packages/thunder-triton/tests/test_opinfo.py).
#   .gpu/: nvFuser (nvfuser_direct) and the cuDNN frontend, packed by ../shared/gpu/pack.sh (about 36 MB, 1-2 min)
#   for the nvfuser and cudnn modes of gpu_session.sh.
# Then, in the GPU session: run(command="benchmarks/gpu_session.sh tests", carry=[".whl"], timeout_s=600) and
# run(command="benchmarks/gpu_session.sh bench", carry=[".whl"], timeout_s=600); for issues 19 and 18:
# run(command="benchmarks/gpu_session.sh nvfuser-tests", carry=[".whl", ".gpu"]), the same with nvfuser-bench, and
# run(command="benchmarks/gpu_session.sh cudnn", carry=[".whl", ".gpu"]); copy the JSON files it returns into
# benchmarks/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
exclude="$(git rev-parse --git-common-dir)/info/exclude"
mkdir -p "$(dirname "$exclude")"
grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >> "$exclude"
grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >> "$exclude"
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl litgpt==0.5.13 expecttest==0.3.0
ls -la .whl
# pack.sh records its folder in ./.git/info/exclude, which a git worktree does not have (.git is a file there): run
# it from a scratch folder, writing into this checkout's .gpu/
if [[ ! -f .gpu/nvfuser.tar.xz ]]; then
  root=$PWD scratch=$(mktemp -d)
  pack=$(ls "$root"/../shared/gpu/pack.sh "$root"/../../shared/gpu/pack.sh 2>/dev/null | head -1)  # checkout or worktree
  mkdir -p "$scratch/.git/info"
  (cd "$scratch" && "$pack" "$root/.gpu")
  rm -rf "$scratch"
fi
du -sh .gpu
