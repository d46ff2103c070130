#!/usr/bin/env bash
# Runs the scripts graph-ascend op_generate writes, for real on CPU: with torch
# (tests/python/test_op_generate_scripts.py) and with MindSpore (-f mindspore,
# tests/python/test_op_generate_mindspore.py). Makes each venv on first use
# ($GA_TORCH_VENV, default .venv-torch, ~4 GB: PyPI's torch with its CUDA wheels, which stay unused;
# $GA_MINDSPORE_VENV, default .venv-mindspore, ~2 GB) and needs a build (scripts/build.sh).
# GA_OP_SCRIPTS=torch or mindspore runs one of the two.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
which="${GA_OP_SCRIPTS:-all}"
# Alone on a fresh clone: packages, and the build unless GA_BUILD_DIR names one.
"$root/scripts/install-deps.sh" >/dev/null
[ -n "${GA_BUILD_DIR:-}" ] || [ -x "$build/bin/graph-ascend" ] || "$root/scripts/build.sh"

venv_for() { # venv_for <venv> <requirements>: (re)installs when the requirements changed
  local venv=$1 requirements=$2
  local stamp="$venv/.requirements.sha" want
  want=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q -r "$requirements"
    echo "$want" > "$stamp"
  fi
}

cd "$root"
status=0
if [ "$which" = all ] || [ "$which" = torch ]; then
  venv="${GA_TORCH_VENV:-$root/.venv-torch}"
  venv_for "$venv" "$root/tests/python/requirements-torch.txt"
  GA_BUILD_DIR="$build" GA_TORCH_PYTHON="$venv/bin/python" CUDA_VISIBLE_DEVICES="" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_op_generate_scripts.py || status=1
fi
if [ "$which" = all ] || [ "$which" = mindspore ]; then
  venv="${GA_MINDSPORE_VENV:-$root/.venv-mindspore}"
  venv_for "$venv" "$root/tests/python/requirements-mindspore.txt"
  GA_BUILD_DIR="$build" GA_MINDSPORE_PYTHON="$venv/bin/python" \
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_op_generate_mindspore.py || status=1
fi
exit $status
