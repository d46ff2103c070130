#!/usr/bin/env bash
# Builds the page (frontend/dist/index.html) and installs the TensorBoard
# plugin with it into a virtual environment, the way scripts/test-python.sh
# installs the plugin (its build copies the page into the package).
#
#   frontend/scripts/install-plugin.sh [VENV]   (default: .venv of the repository)
#
# GA_BUILD_DIR (default build/) names the C++ build holding bin/graph-ascend-server.
# npm ci runs only when package-lock.json changed since the last run.
set -euo pipefail
frontend=$(cd "$(dirname "$0")/.." && pwd)
root=$(cd "$frontend/.." && pwd)
venv="${1:-$root/.venv}"
build="${GA_BUILD_DIR:-$root/build}"

cd "$frontend"
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat node_modules/.lock.sha 2>/dev/null)" != "$lock_sum" ]; then
  echo "install-plugin: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > node_modules/.lock.sha
fi
npm run --silent build >/dev/null

GA_BUILD_DIR="$build" GA_SERVER_BINARY="$build/bin/graph-ascend-server" \
  "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --force-reinstall "$root/plugin/python"
installed=$("$venv/bin/python" -c 'import graph_ascend_plugin, pathlib; print(pathlib.Path(graph_ascend_plugin.__file__).parent / "static" / "index.html")')
if ! cmp -s "$installed" "$frontend/dist/index.html"; then
  echo "install-plugin: the installed plugin does not serve frontend/dist/index.html ($installed)" >&2
  exit 1
fi
