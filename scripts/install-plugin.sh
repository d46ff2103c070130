#!/usr/bin/env bash
# Builds the GRAPH_ASCEND page (frontend/) and installs the graph-ascend
# package (TensorBoard plugin and `graph-ascend` command), with the
# executables from build/ and that page inside, into .venv.
# Needs scripts/install-deps.sh, scripts/build.sh and scripts/python-env.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_VENV:-$root/.venv}"
"$root/scripts/build-page.sh"
GA_BUILD_DIR="$build" "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --force-reinstall \
  "$root/plugin/python"
echo "install-plugin: graph-ascend (plugin, command) installed into $venv"
