#!/usr/bin/env bash
# Remakes dump.json and dump_tensor_data/ here with real MindSpore on CPU (make_dump.py; README.md says why
# not with msprobe). Needs the venv of scripts/test-op-scripts.sh ($GA_MINDSPORE_VENV, default .venv-mindspore).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../../.." && pwd)
venv="${GA_MINDSPORE_VENV:-$root/.venv-mindspore}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q -r "$root/tests/python/requirements-mindspore.txt"
# A folder that is gone afterwards, as a dumping machine's is: op_generate then finds the files beside dump.json.
work=$(mktemp -d /tmp/ga_ms_dump_XXXXXX)
trap 'rm -rf "$work"' EXIT
"$venv/bin/python" "$here/make_dump.py" "$work/dump" > "$work/log.txt" 2>&1 || { tail -20 "$work/log.txt"; exit 1; }
rm -rf "$here/dump.json" "$here/dump_tensor_data"
cp -r "$work/dump/dump.json" "$work/dump/dump_tensor_data" "$here/"
