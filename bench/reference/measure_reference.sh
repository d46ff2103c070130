#!/usr/bin/env bash
# Measures the reference msprobe graph builder on the largest committed samples and on scaled
# inputs (bench/scale/scale_sample.py), for each reference version. Prints one line per run:
#   <version> <input> wall_s=… peak_rss_mb=… max_process_rss_mb=… exit=…
#
#   bench/reference/measure_reference.sh [--versions "8.1.2 8.3.3 26.2.0"] [--nodes "10000 100000"]
#
# Run it on a quiet machine (it runs one msprobe at a time; msprobe itself uses a process pool).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
versions="8.1.2 8.3.3 26.2.0"
nodes="10000 100000"
while [ $# -gt 0 ]; do
  case $1 in
    --versions) versions=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    *) echo "usage: measure_reference.sh [--versions \"V …\"] [--nodes \"N …\"]" >&2; exit 2 ;;
  esac
done

inputs=(samples/gpt_tensor/compare.json samples/gpt_statistics/compare.json samples/gpt_statistics/batch.json)
for n in $nodes; do
  out="$root/bench/out/scale/gpt_$n"
  if [ ! -f "$out/compare.json" ]; then
    python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" --nodes "$n" --out "$out" >/dev/null
  fi
  inputs+=("bench/out/scale/gpt_$n/compare.json")
done

cd "$root"
for version in $versions; do
  for input in "${inputs[@]}"; do
    result=$("$here/run_msprobe.sh" --version "$version" "$input" 2>&1 | grep -E '^wall_s=' || true)
    echo "$version $input ${result:-failed (see bench/out/reference/*.log)}"
  done
done
