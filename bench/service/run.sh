#!/usr/bin/env bash
# The graph-service benchmark (docs/PERFORMANCE.md, "Graph service"): for each size, the scaled
# compare of samples/gpt_statistics (bench/scale), built with graph-ascend, measured with
# bench_service.py; and, when the reference's output for the same dump exists
# (bench/out/reference/gpt_<n>-compare-8.1.2/*.vis, made by bench/reference/run_msprobe.sh),
# tb_graph_ascend's own backend on it with bench_reference.py. Figures go to bench/out/service/.
#
#   bench/service/run.sh [--rounds N] [SIZE...]      (default sizes: 100000 1000000)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
out="$root/bench/out/service"
rounds=200
if [ "${1:-}" = "--rounds" ]; then rounds=$2; shift 2; fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100000 1000000)
mkdir -p "$out/logdir"
for n in "${sizes[@]}"; do
  dump="$root/bench/out/scale/gpt_$n"
  if [ ! -f "$dump/compare.json" ]; then
    python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" --nodes "$n" --out "$dump"
  fi
  vis_dir="$out/logdir/gpt_$n"
  if ! ls "$vis_dir"/compare_*.vis >/dev/null 2>&1; then
    (cd "$dump" && "$build/bin/graph-ascend" graph -i compare.json -o "$vis_dir")
  fi
  vis=$(cd "$out/logdir" && ls gpt_"$n"/compare_*.vis | head -1)
  echo "== graph-ascend-server, gpt_$n"
  "$root/.venv/bin/python" "$root/bench/service/bench_service.py" --logdir "$out/logdir" --file "$vis" \
    --server "$build/bin/graph-ascend-server" --rounds "$rounds" --json "$out/ours_gpt_$n.json"
  ref=$(ls "$root/bench/out/reference/gpt_$n-compare-8.1.2"/*.vis 2>/dev/null | head -1 || true)
  if [ -n "$ref" ]; then
    echo "== tb_graph_ascend, gpt_$n"
    python3 "$root/bench/service/bench_reference.py" --vis "$ref" --rounds "$rounds" \
      --json "$out/reference_gpt_$n.json" || echo "reference run failed (see above)"
  else
    echo "== tb_graph_ascend, gpt_$n: no reference output (bench/reference/run_msprobe.sh --version 8.1.2 $dump/compare.json)"
  fi
done
