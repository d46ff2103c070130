#!/usr/bin/env bash
# Cold first screen of one .vis.db in the real pages, side by side in one run (issue 29 point 4):
# msprobe 26.2.0's own TensorBoard page (hierarchy_plugin, tab GRAPH_ASCEND) and graph-ascend's page, each
# in Debian's Chromium through Playwright, on the same file and machine.
#
#   bench/frontend/open_side_by_side.sh FILE.vis.db [ROUNDS]      (default 5 rounds)
#
# Each round runs both pages, msprobe's first in odd rounds and ours first in even ones; each page gets a
# fresh TensorBoard on a log directory holding FILE alone (a hard link, else a copy, in a temporary
# directory; run "run") and a fresh Chromium; ours an empty conversion cache (XDG_CACHE_HOME) and a
# graph-ascend-server that TensorBoard starts on the page's first request, as a user's first open. The
# file is read once before the first round so that neither side pays for the disk.
#
# What is timed (open_side_by_side.mjs says it in full): from the navigation to TensorBoard's
# /#graph_ascend (msprobe's page has no file picker: it opens the first file as it loads, and so does ours
# with a single run) to both the NPU and the Bench pane showing the root's children (the names in the
# root's sub_nodes of the file): "ready" when that content is in the page, "painted" after the frame that
# draws it. Times are taken inside the page (performance.now), to 0.1 ms. The "page" figure is when the
# plugin's iframe began loading (TensorBoard's own shell before it: 2.21.0 for msprobe, 2.20.0 for ours).
#
# Prints one line per page per round (with each plugin request's start/sent-end, ms from navigation start),
# then the medians, the ratios ours / msprobe and the load average. Measures only: asserts nothing.
#
# Needs: .venv with tensorboard and the plugin installed (scripts/install-plugin.sh), build/bin (or
# GA_BUILD_DIR), frontend/node_modules (Playwright), /usr/bin/chromium and msprobe 26.2.0's venv
# (GA_MSPROBE_VENV, default bench/.venv-msprobe-26.2.0-graph). GA_SHOTS=DIR keeps a screenshot per run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
db=$(realpath "$1")
rounds="${2:-5}"
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_VENV:-$root/.venv}"
msvenv="${GA_MSPROBE_VENV:-$root/bench/.venv-msprobe-26.2.0-graph}"
for need in "$venv/bin/tensorboard" "$msvenv/bin/tensorboard" "$build/bin/graph-ascend-server" /usr/bin/chromium \
  "$root/frontend/node_modules/playwright"; do
  [ -e "$need" ] || { echo "open_side_by_side: $need is missing" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/graph-ascend-sidebyside.XXXXXX")
. "$here/board.sh"
trap 'stop_board; rm -rf "$work"' EXIT

mkdir -p "$work/logdir/run"
ln "$db" "$work/logdir/run/" 2>/dev/null || cp "$db" "$work/logdir/run/"
cat "$db" >/dev/null
# The root's children on each side: what both first screens must show.
expect=$(python3 - "$db" <<'EOF'
import json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?immutable=1", uri=True)
step, rank = db.execute("SELECT step, rank FROM tb_nodes ORDER BY step, rank LIMIT 1").fetchone()
roots = db.execute("SELECT graph_id, sub_nodes FROM tb_nodes WHERE (up_node IS NULL OR up_node = '') "
                   "AND step = ? AND rank = ? AND micro_step_id >= -1", (step, rank)).fetchall()
side = lambda p: next(json.loads(s) for g, s in roots if g.startswith(p))
print(json.dumps({"npu": side("NPU"), "bench": side("Bench")}))
EOF
)
results="$work/results.jsonl"

one() { # one msprobe|ours ROUND
  local which=$1 round=$2 tb env=()
  if [ "$which" = msprobe ]; then
    tb="$msvenv/bin/tensorboard"
  else
    tb="$venv/bin/tensorboard"
    mkdir -p "$work/cache-$round"
    env=(XDG_CACHE_HOME="$work/cache-$round" GRAPH_ASCEND_SERVER_BINARY="$build/bin/graph-ascend-server")
  fi
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  env "${env[@]}" "$tb" --logdir "$work/logdir" --host 127.0.0.1 --port "$port" >"$work/tb-$which.log" 2>&1 &
  tb_pid=$!
  local url="http://127.0.0.1:$port" ready=0
  # Ready as a user sees it: TensorBoard answers (the plugins' own start is left in the timed interval).
  for _ in $(seq 600); do
    curl -sf "$url/data/plugins_listing" >/dev/null 2>&1 && { ready=1; break; }
    sleep 0.2
  done
  [ "$ready" = 1 ] || { echo "open_side_by_side: $tb did not start" >&2; cat "$work/tb-$which.log" >&2; exit 1; }
  local shot=""
  [ -z "${GA_SHOTS:-}" ] || shot="$GA_SHOTS/$which-$round.png"
  local line
  line=$(GA_SIDE="$which" GA_TB_URL="$url" GA_EXPECT="$expect" GA_SHOT="$shot" node "$here/open_side_by_side.mjs")
  stop_board
  echo "$line" >>"$results"
  python3 - "$line" "$round" <<'EOF'
import json, sys
r = json.loads(sys.argv[1])
name = {"msprobe": "msprobe 26.2.0 page", "ours": "graph-ascend page  "}[r["side"]]
print(f"round {sys.argv[2]}: {name} ready {r['readyMs']:7.1f} ms, painted {r['paintedMs']:7.1f} ms "
      f"(plugin page from {r['pageMs']:.1f} ms; requests: {'; '.join(r['requests'])})")
EOF
}

echo "open_side_by_side: $(basename "$db"), $rounds rounds, ms from the navigation to /#graph_ascend; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then
    one msprobe "$round"
    one ours "$round"
  else
    one ours "$round"
    one msprobe "$round"
  fi
done
python3 - "$results" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = {(s, k): statistics.median(r[k] for r in rows if r["side"] == s)
       for s in ("msprobe", "ours") for k in ("readyMs", "paintedMs", "pageMs")}
n = sum(r["side"] == "ours" for r in rows)
for k, what in (("readyMs", "first screen in the page"), ("paintedMs", "first screen painted")):
    a, b = med[("msprobe", k)], med[("ours", k)]
    print(f"median of {n} rounds, {what}: msprobe 26.2.0 page {a:.1f} ms, graph-ascend page {b:.1f} ms "
          f"(graph-ascend / msprobe {b / a:.2f})")
inner = {s: statistics.median(r["readyMs"] - r["pageMs"] for r in rows if r["side"] == s) for s in ("msprobe", "ours")}
print(f"median plugin page start: msprobe {med[('msprobe', 'pageMs')]:.1f} ms, graph-ascend "
      f"{med[('ours', 'pageMs')]:.1f} ms (TensorBoard's shell before each); from it to the first screen in the page: "
      f"msprobe {inner['msprobe']:.1f} ms, graph-ascend {inner['ours']:.1f} ms "
      f"(graph-ascend / msprobe {inner['ours'] / inner['msprobe']:.2f})")
print(f"load average at the end: {sys.argv[2]}")
EOF
