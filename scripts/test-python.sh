#!/usr/bin/env bash
# Python tests: sample checks, plugin tests against a real tensorboard.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
"$root/.venv/bin/python" -m pytest -q tests/python
