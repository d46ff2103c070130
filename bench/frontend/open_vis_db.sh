#!/usr/bin/env bash
# Time opening a .vis.db in the GRAPH_ASCEND page of a real TensorBoard in
# Chromium (issue 9, 8): from picking its run to both sides drawn, with an
# empty conversion cache each round (a cold open, as a user's first).
#
#   bench/frontend/open_vis_db.sh FILE.vis.db [ROUNDS]      (default 3 rounds)
#
# The log directory holds a small compare (samples/cnn_statistics, opened
# first, as the page opens the first run) as run a_small and FILE as run
# z_db (a hard link, else a copy: the service serves nothing outside the log
# directory). Uses build/bin and the plugin installed in .venv
# (scripts/install-plugin.sh). Prints one JSON line per round.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
db=$(realpath "$1")
rounds="${2:-3}"
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_VENV:-$root/.venv}"
work=$(mktemp -d "${TMPDIR:-/tmp}/graph-ascend-opendb.XXXXXX")
. "$here/board.sh"
trap 'stop_board; rm -rf "$work"' EXIT

mkdir -p "$work/logdir/z_db"
(cd "$root/samples/cnn_statistics" && "$build/bin/graph-ascend" graph -i compare.json -o "$work/logdir/a_small" >/dev/null)
ln "$db" "$work/logdir/z_db/" 2>/dev/null || cp "$db" "$work/logdir/z_db/"
for round in $(seq "$rounds"); do
  cache="$work/cache-$round"
  mkdir -p "$cache"
  port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  XDG_CACHE_HOME="$cache" "$venv/bin/tensorboard" --logdir "$work/logdir" --host 127.0.0.1 --port "$port" \
    >"$work/tensorboard.log" 2>&1 &
  tb_pid=$!
  url="http://127.0.0.1:$port"
  for _ in $(seq 120); do
    curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "$url/data/plugin/graph_ascend/api/Health" \
      >/dev/null 2>&1 && break
    sleep 0.5
  done
  GA_TB_URL="$url" GA_RUN="z_db" GA_OPEN_ONLY=1 node "$here/frame_times.mjs"
  stop_board
done
