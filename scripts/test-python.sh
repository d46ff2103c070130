#!/usr/bin/env bash
# Python tests: sample checks, plugin tests against a real tensorboard.
# Installs the TensorBoard plugin (with the graph-ascend-server just built
# into $GA_BUILD_DIR, default build/) into .venv first. On a fresh clone it
# makes build/ (scripts/build.sh) and .venv (scripts/python-env.sh) first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
[ -n "${GA_BUILD_DIR:-}" ] || [ -x "$build/bin/graph-ascend-server" ] || "$root/scripts/build.sh"
"$root/scripts/python-env.sh"
GA_BUILD_DIR="$build" GA_SERVER_BINARY="$build/bin/graph-ascend-server" \
  "$root/.venv/bin/python" -m pip install -q --no-build-isolation --no-deps --force-reinstall "$root/plugin/python"
cd "$root"
GA_BUILD_DIR="$build" "$root/.venv/bin/python" -m pytest -q tests/python
