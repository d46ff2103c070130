#!/usr/bin/env bash
# The rank overview at 1000 ranks (docs/PERFORMANCE.md, "Rank overview"):
#
#   bench/overview/run.sh [RANKS] [STEPS]       (default 1000 ranks, 2 steps)
#
# Installs the plugin with the freshly built page into .venv (scripts/install-plugin.sh), then runs
# overview_scale.py --page: a batch of RANKS rank pairs from samples/rank_origin built by
# build/bin/graph-ascend, GetOverview timed against graph-ascend-server, and the page's open time of
# the overview in Chromium. Scratch data under /tmp/overview/scale (removed afterwards).
# GA_BUILD_DIR and GA_VENV as for scripts/test-browser.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_VENV:-$root/.venv}"
GA_BUILD_DIR="$build" GA_VENV="$venv" "$root/scripts/install-plugin.sh" >/dev/null
mkdir -p "$root/bench/out/overview"
"$venv/bin/python" "$root/bench/overview/overview_scale.py" --ranks "${1:-1000}" --steps "${2:-2}" --build "$build" --page |
  tee "$root/bench/out/overview/overview_${1:-1000}.json"
