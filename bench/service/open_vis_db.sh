#!/usr/bin/env bash
# Opening msprobe's .vis.db through the graph service, beside msprobe 26.2.0's own plugin on the same
# file: makes a 10^5-node-a-side compare (bench/scale from samples/gpt_statistics), writes it as a
# .vis.db with `graph-ascend export --format db` (the 26.x schema), times `graph-ascend import` of it
# and of the same graph as a msprobe 8.1 JSON .vis, runs bench/service/bench_service.py on the .vis.db
# (a cold open converts it into an empty cache directory, a second run finds it converted), then
# bench/service/open_first_view.py (the page's open: OpenFile, then GetView of both sides; cold, warm),
# bench/service/open_in_msprobe26_plugin_time.py (msprobe 26.2.0's TensorBoard plugin, from
# bench/.venv-msprobe-26.2.0-graph: run_msprobe.sh --version 26.2.0-graph --install).
#   bench/service/open_vis_db.sh [NODES]      (default 100000; figures in docs/PERFORMANCE.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
nodes="${1:-100000}"
out="${OUT:-$root/bench/out/vis_db_$nodes}"
bin="$root/build/bin"
rm -rf "$out" && mkdir -p "$out/logdir/run"
python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" --nodes "$nodes" --out "$out/scale" >/dev/null
"$bin/graph-ascend" graph -i "$out/scale/compare.json" -o "$out/built" >/dev/null
vis=$(ls "$out"/built/*.vis | head -1)
db="$out/logdir/run/compare_scaled.vis.db"
/usr/bin/time -f "export --format db: wall_s=%e user_s=%U sys_s=%S peak_rss_kb=%M" "$bin/graph-ascend" export "$vis" \
  --format db -o "$db"
/usr/bin/time -f "import (db -> .vis): wall_s=%e user_s=%U sys_s=%S peak_rss_kb=%M" "$bin/graph-ascend" import "$db" \
  -o "$out/imported.vis"
"$bin/graph-ascend" export "$vis" -o "$out/compare_scaled_8.1.vis" >/dev/null
/usr/bin/time -f "import (JSON .vis -> .vis): wall_s=%e user_s=%U sys_s=%S peak_rss_kb=%M" "$bin/graph-ascend" import \
  "$out/compare_scaled_8.1.vis" -o "$out/imported_json.vis"
rm -f "$out/compare_scaled_8.1.vis"
ls -l "$db" "$vis"
export XDG_CACHE_HOME="$out/cache"  # a cold cache: the first open includes the conversion
echo "graph-ascend service, cold open:"
"$root/.venv/bin/python" "$root/bench/service/bench_service.py" --logdir "$out/logdir" \
  --file run/compare_scaled.vis.db --rounds "${ROUNDS:-20}"
echo "graph-ascend service, warm open (converted .vis in the cache):"
"$root/.venv/bin/python" "$root/bench/service/bench_service.py" --logdir "$out/logdir" \
  --file run/compare_scaled.vis.db --rounds "${ROUNDS:-20}"
echo "open in the page (OpenFile, then GetView of both sides), cold (empty cache), then warm:"
rm -rf "$out/cache"
"$root/.venv/bin/python" "$root/bench/service/open_first_view.py" --logdir "$out/logdir" --file run/compare_scaled.vis.db \
  --cache "$out/cache"
"$root/.venv/bin/python" "$root/bench/service/open_first_view.py" --logdir "$out/logdir" --file run/compare_scaled.vis.db \
  --cache "$out/cache"
"$root/bench/.venv-msprobe-26.2.0-graph/bin/python" "$root/bench/service/open_in_msprobe26_plugin_time.py" --db "$db"
