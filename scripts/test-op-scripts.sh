#!/usr/bin/env bash
# Runs the scripts graph-ascend op_generate writes, with torch on CPU (tests/python/test_op_generate_scripts.py).
# Makes the torch venv on first use ($GA_TORCH_VENV, default .venv-torch; ~4 GB, PyPI's torch with its CUDA
# wheels, which stay unused) and needs a build (scripts/build.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_TORCH_VENV:-$root/.venv-torch}"
requirements="$root/tests/python/requirements-torch.txt"
stamp="$venv/.requirements.sha"
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q -r "$requirements"
  echo "$want" > "$stamp"
fi
cd "$root"
GA_BUILD_DIR="$build" GA_TORCH_PYTHON="$venv/bin/python" CUDA_VISIBLE_DEVICES="" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python/test_op_generate_scripts.py
