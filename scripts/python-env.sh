#!/usr/bin/env bash
# Creates (or refreshes) the project's Python virtual environment in .venv
# with requirements-dev.txt. Prints nothing but errors unless it installs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
stamp="$venv/.requirements.sha"
want=$(sha256sum "$root/requirements-dev.txt" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ]; then
  "$root/scripts/install-deps.sh" >/dev/null  # python3-venv
  python3 -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "python-env: installing requirements-dev.txt into .venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q -r "$root/requirements-dev.txt"
  echo "$want" > "$stamp"
fi
# The plugin was distributed as graph-ascend-plugin before the wheel took the
# name graph-ascend; both installed register the tab twice and TensorBoard
# refuses to start ("Duplicate plugins for name graph_ascend").
if "$venv/bin/python" -m pip show -q graph-ascend-plugin >/dev/null 2>&1; then
  "$venv/bin/python" -m pip uninstall -q -y graph-ascend-plugin
fi
