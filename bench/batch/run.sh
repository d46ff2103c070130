#!/usr/bin/env bash
# One big machine (issue 31; docs/SCALE.md, "One process on every core"): a batch of RANKS ranks, each
# the same 10^5-node pair (bench/scale/scale_sample.py, hard links: no copies), built by one process at
# --jobs 1 .. CORES and as CORES shards (--shard I/N under xargs -P) followed by link; prints wall, CPU
# and peak RSS of each, and one pair alone, and checks every result against --jobs 1 (bin/ga_same_graphs).
# Scratch data under /tmp/ga-batch-bench (kept: remove it yourself).
#
#   bench/batch/run.sh [--ranks 16] [--nodes 100000] [--cores N] [--jobs "1 4 8 16"] [--work DIR]
#                      [--binary build/bin/graph-ascend]
# --jobs: the --jobs values timed (default 1 .. CORES); --cores: the shards.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ranks=16
nodes=100000
cores=$(nproc)
jobs_list=""
work=/tmp/ga-batch-bench
bin="$root/build/bin/graph-ascend"
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --jobs) jobs_list=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --binary) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--ranks N] [--nodes N] [--cores N] [--jobs LIST] [--work DIR] [--binary BINARY]" >&2; exit 2 ;;
  esac
done
[ -n "$jobs_list" ] || jobs_list=$(seq 1 "$cores")
first_jobs=${jobs_list%% *}
same="$(dirname "$bin")/ga_same_graphs"
mkdir -p "$work"
pair="$work/pair_$nodes"
if [ ! -f "$pair/compare.json" ]; then
  python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" --nodes "$nodes" --out "$pair" >/dev/null
fi
batch="$work/batch_${ranks}x$nodes"
if [ ! -d "$batch" ]; then
  for side in npu bench; do
    for ((r = 0; r < ranks; r++)); do
      mkdir -p "$batch/$side/rank$r"
      ln "$pair/$side/step0/rank0/"*.json "$batch/$side/rank$r/"
    done
  done
  echo '{"npu_path": "npu", "bench_path": "bench"}' > "$batch/batch.json"
fi
fmt='%e %U %S %M'
row() { awk '{ printf "%6.1f s wall %7.1f s CPU %6.0f MB peak", $1, $2 + $3, $4 / 1024 }' "$1"; }
echo "$ranks ranks of $nodes-node pairs, $(du -shL "$pair" | cut -f1) a pair; nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$work/out"
/usr/bin/time -f "$fmt" -o "$work/pair.time" "$bin" graph -i "$pair/compare.json" -o "$work/out/pair" >/dev/null
echo "one pair:               $(row "$work/pair.time")"
for j in $jobs_list; do
  /usr/bin/time -f "$fmt" -o "$work/jobs$j.time" "$bin" graph -i "$batch/batch.json" -o "$work/out/jobs$j" --jobs $j \
    >/dev/null
  echo "one process, --jobs $j: $(row "$work/jobs$j.time")"
  [ "$j" = "$first_jobs" ] || "$same" "$work/out/jobs$first_jobs" "$work/out/jobs$j"
done
rm -f "$work"/shard*.time
t0=$(date +%s.%N)
seq 0 $((cores - 1)) | xargs -P "$cores" -I{} /usr/bin/time -f "$fmt" -o "$work/shard{}.time" \
  "$bin" graph -i "$batch/batch.json" -o "$work/out/shards" --shard "{}/$cores" >/dev/null
/usr/bin/time -f "$fmt" -o "$work/link.time" "$bin" link "$work/out/shards" >/dev/null
wall=$(echo "$(date +%s.%N) - $t0" | bc)
cat "$work"/shard*.time "$work/link.time" | awk -v w="$wall" -v n="$cores" \
  '{ cpu += $2 + $3; if ($4 > peak) peak = $4 } END { printf "%d shards + link:      %6.1f s wall %7.1f s CPU %6.0f MB peak (each)\n", n, w, cpu, peak / 1024 }'
"$same" "$work/out/jobs$first_jobs" "$work/out/shards"
