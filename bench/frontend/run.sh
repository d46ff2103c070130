#!/usr/bin/env bash
# Frame times of the GRAPH_ASCEND page while panning the 10^5-node scaled
# compare with one large module expanded (issue 6, item 11).
#
#   bench/frontend/run.sh [NODES]        (default 100000)
#
# Scales samples/gpt_statistics to NODES nodes per side (bench/scale, kept in
# bench/out/scale), builds the compare .vis with build/bin/graph-ascend,
# installs the plugin with the freshly built page into .venv
# (scripts/install-plugin.sh), starts a real
# tensorboard on a free port and runs frame_times.mjs (Playwright + Debian's
# Chromium). The JSON result goes to stdout and bench/out/frontend/.
# GA_BUILD_DIR and GA_VENV as for scripts/test-browser.sh; GA_NODE names the
# first-level node to expand (default "optimizer": ~40 000 leaves at 10^5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nodes="${1:-100000}"
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_VENV:-$root/.venv}"
case_dir="$root/bench/out/scale/gpt_$nodes"
out="$root/bench/out/frontend"
mkdir -p "$out"

if [ ! -f "$case_dir/compare.json" ]; then
  python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" --nodes "$nodes" --out "$case_dir"
fi
GA_BUILD_DIR="$build" GA_VENV="$venv" "$root/scripts/install-plugin.sh" >/dev/null

work=$(mktemp -d "${TMPDIR:-/tmp}/graph-ascend-frames.XXXXXX")
. "$here/board.sh"
trap 'stop_board; rm -rf "$work"' EXIT

(cd "$case_dir" && "$build/bin/graph-ascend" graph -i compare.json -o "$work/logdir/gpt_$nodes" >"$work/graph.log" 2>&1) || {
  cat "$work/graph.log" >&2
  exit 1
}
port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$venv/bin/tensorboard" --logdir "$work/logdir" --host 127.0.0.1 --port "$port" >"$work/tensorboard.log" 2>&1 &
tb_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 120); do
  curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "$url/data/plugin/graph_ascend/api/Health" >/dev/null 2>&1 && break
  sleep 0.5
done

GA_TB_URL="$url" GA_RUN="gpt_$nodes" node "$here/frame_times.mjs" | tee "$out/frame_times_$nodes.json"
