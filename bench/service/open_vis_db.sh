#!/usr/bin/env bash
# Opening msprobe's .vis.db through the graph service: makes a 10^5-node-a-side compare
# (bench/scale from samples/gpt_statistics), writes it as a .vis.db with `graph-ascend export
# --format db`, and runs bench/service/bench_service.py on the .vis.db (a cold open converts it
# into the cache directory, then the usual view/search/detail latencies).
#   bench/service/open_vis_db.sh [NODES]      (default 100000; figures in docs/PERFORMANCE.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
nodes="${1:-100000}"
out="$root/bench/out/vis_db_$nodes"
bin="$root/build/bin"
rm -rf "$out" && mkdir -p "$out/logdir/run"
python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" --nodes "$nodes" --out "$out/scale" >/dev/null
"$bin/graph-ascend" graph -i "$out/scale/compare.json" -o "$out/built" >/dev/null
vis=$(ls "$out"/built/*.vis | head -1)
/usr/bin/time -f "export --format db: wall_s=%e peak_rss_mb=%M(KB)" "$bin/graph-ascend" export "$vis" --format db \
  -o "$out/logdir/run/compare_scaled.vis.db"
/usr/bin/time -f "import (db -> .vis): wall_s=%e peak_rss_mb=%M(KB)" "$bin/graph-ascend" import \
  "$out/logdir/run/compare_scaled.vis.db" -o "$out/imported.vis"
ls -l "$out/logdir/run/compare_scaled.vis.db" "$vis"
export XDG_CACHE_HOME="$out/cache"  # a cold cache: the open includes the conversion
"$root/.venv/bin/python" "$root/bench/service/bench_service.py" --logdir "$out/logdir" \
  --file run/compare_scaled.vis.db --rounds "${ROUNDS:-50}"
