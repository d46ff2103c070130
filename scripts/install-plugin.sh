#!/usr/bin/env bash
# Builds the GRAPH_ASCEND page (frontend/) and installs the graph-ascend
# package (TensorBoard plugin and `graph-ascend` command), with the
# executables from build/ and that page inside, into .venv. On a fresh clone
# it makes what is missing: the build (scripts/build.sh) and the project's
# .venv (scripts/python-env.sh). GA_BUILD_DIR and GA_VENV name another build
# or environment, which must exist (a sanitizer build is not made here).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_VENV:-$root/.venv}"
"$root/scripts/install-deps.sh" >/dev/null
[ -n "${GA_BUILD_DIR:-}" ] || [ -x "$build/bin/graph-ascend-server" ] || "$root/scripts/build.sh"
[ -n "${GA_VENV:-}" ] || "$root/scripts/python-env.sh"
for need in "$build/bin/graph-ascend" "$build/bin/graph-ascend-server" "$venv/bin/python"; do
  [ -x "$need" ] || { echo "install-plugin: $need is missing" >&2; exit 1; }
done
"$root/scripts/build-page.sh"
GA_BUILD_DIR="$build" "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --force-reinstall \
  "$root/plugin/python"
echo "install-plugin: graph-ascend (plugin, command) installed into $venv"
