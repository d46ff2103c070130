#!/usr/bin/env bash
# One big pair on every core (issue 31; docs/SCALE.md, "One pair on every core"): the compare of one
# NODES-a-side pair (bench/scale/scale_sample.py, generated once under WORK), by BINARY and, when given,
# by a BEFORE binary, ROUNDS times each, alternating; prints each run's wall, CPU, cores in use (CPU / wall)
# and peak RSS, the medians and the ratios after/before, then the stages of one run of BINARY (`-v`:
# wall and CPU of each), and checks that both give the same graphs (bin/ga_same_graphs).
#
#   bench/batch/pair.sh [--nodes 1000000] [--rounds 3] [--before OLD_BINARY] [--threads N] [--work DIR]
#                       [--binary build/bin/graph-ascend]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
nodes=1000000
rounds=3
before=""
threads=""
work=/tmp/ga-batch-bench
bin="$root/build/bin/graph-ascend"
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --binary) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--nodes N] [--rounds N] [--before BINARY] [--threads N] [--work DIR] [--binary BINARY]" >&2
       exit 2 ;;
  esac
done
same="$(dirname "$bin")/ga_same_graphs"
pair="$work/pair_$nodes"
mkdir -p "$work"
if [ ! -f "$pair/compare.json" ]; then
  python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" --nodes "$nodes" --out "$pair" \
    >/dev/null
fi
extra=()
[ -z "$threads" ] || extra=(--threads "$threads")
# One run: "wall cpu peak_kb" into $work/run.time.
run() {  # BINARY OUT [FLAGS...]
  local b=$1 out=$2
  shift 2
  rm -rf "$out"
  /usr/bin/time -f '%e %U %S %M' -o "$work/run.time" "$b" graph -i "$pair/compare.json" -o "$out" "$@" >/dev/null
  awk '{ printf "%.2f %.2f %.0f\n", $1, $2 + $3, $4 }' "$work/run.time"
}
row() {  # LABEL "wall cpu kb"
  echo "$2" | awk -v l="$1" '{ printf "%-14s %7.2f s wall %7.2f s CPU %5.2f cores %6.0f MB peak\n", l, $1, $2, $2 / $1, $3 / 1024 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "pair of $nodes nodes a side ($(du -shL "$pair" | cut -f1)); nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/after.runs"
: >"$work/before.runs"
for ((i = 1; i <= rounds; i++)); do
  if [ -n "$before" ]; then
    r=$(run "$before" "$work/out_before")
    echo "$r" >>"$work/before.runs"
    row before "$r"
  fi
  r=$(run "$bin" "$work/out_after" "${extra[@]}")
  echo "$r" >>"$work/after.runs"
  row after "$r"
done
med() {  # FILE -> "wall cpu kb" medians
  echo "$(cut -d' ' -f1 "$1" | median) $(cut -d' ' -f2 "$1" | median) $(cut -d' ' -f3 "$1" | median)"
}
a=$(med "$work/after.runs")
row "median" "$a"
if [ -n "$before" ]; then
  b=$(med "$work/before.runs")
  row "before median" "$b"
  echo "$a $b" | awk '{ printf "after/before: wall %.2fx, CPU %.2fx, cores in use %.2f -> %.2f, peak %.2fx\n",
    $1 / $4, $2 / $5, $5 / $4, $2 / $1, $3 / $6 }'
  "$same" "$work/out_before" "$work/out_after"
fi
echo "stages (one run, -v):"
rm -rf "$work/out_stages"
"$bin" graph -i "$pair/compare.json" -o "$work/out_stages" -v "${extra[@]}" 2>&1 >/dev/null | sed -n 's/^graph-ascend: /  /p'
