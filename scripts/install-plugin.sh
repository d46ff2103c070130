#!/usr/bin/env bash
# Builds the GRAPH_ASCEND page (frontend/) and installs the TensorBoard plugin,
# with graph-ascend-server from build/ and that page inside, into .venv.
# Needs scripts/install-deps.sh, scripts/build.sh and scripts/python-env.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_VENV:-$root/.venv}"
cd "$root/frontend"
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -d node_modules ] || [ "$(cat node_modules/.lock.sha 2>/dev/null)" != "$lock_sum" ]; then
  echo "install-plugin: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock_sum" > node_modules/.lock.sha
fi
npm run --silent build >/dev/null
GA_BUILD_DIR="$build" GA_SERVER_BINARY="$build/bin/graph-ascend-server" \
  "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --force-reinstall "$root/plugin/python"
echo "install-plugin: graph_ascend plugin installed into $venv"
