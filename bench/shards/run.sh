#!/usr/bin/env bash
# The shard benchmark (docs/PERFORMANCE.md, "Shards"): a synthetic batch of RANKS rank pairs
# (bench/shards/make_batch.py: samples/dist_gloo's real dumps per rank, one rank perturbed)
# built (a) in one process, (b) as 2 shards under mpirun, (c) as a Slurm array of 2 shards and
# a dependent link job on a one-node cluster (scripts/slurm-local.sh); each result is checked
# against (a) with bin/ga_same_graphs. With --msprobe SMALL, also msprobe 26.2.0 graph_visualize
# (bench/reference/run_msprobe.sh --version 26.2.0-graph) and graph-ascend on a SMALL-rank batch.
# Scratch data under /tmp/shards/ (removed at the end unless KEEP=1).
#
#   bench/shards/run.sh [--ranks 1000] [--msprobe 32]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
ranks=1000
small=0
while [ $# -gt 0 ]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --msprobe) small=$2; shift 2 ;;
    *) echo "usage: $0 [--ranks N] [--msprobe N]" >&2; exit 2 ;;
  esac
done
bin="$root/build/bin/graph-ascend"
same="$root/build/bin/ga_same_graphs"
work=/tmp/shards/bench
rm -rf "$work"
mkdir -p "$work"
cleanup() {
  "$root/scripts/slurm-local.sh" stop "$work/slurm" >/dev/null 2>&1 || true
  [ "${KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
python3 "$root/bench/shards/make_batch.py" --ranks "$ranks" --out "$work/batch" >/dev/null
config="$work/batch/batch.json"
echo "batch: $ranks rank pairs, $(du -sh "$work/batch" | cut -f1) of dumps, nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc | xargs printf '%.1f'; }
fmt='%e %U %S %M'
# "wall cpu peak_mb" of a /usr/bin/time file
row() { awk '{ printf "%.1f s wall, %.1f s CPU, %.0f MB peak", $1, $2 + $3, $4 / 1024 }' "$1"; }

# (a) one process
/usr/bin/time -f "$fmt" -o "$work/one.time" "$bin" graph -i "$config" -o "$work/one" >/dev/null
echo "(a) one process:        $(row "$work/one.time")"

# (b) mpirun -np 2, then link
t=$(now)
mpirun --allow-run-as-root --oversubscribe -np 2 sh -c \
  "exec /usr/bin/time -f '$fmt' -o $work/mpi.\$OMPI_COMM_WORLD_RANK.time '$bin' graph -i '$config' -o '$work/mpi' --shard" >/dev/null
shards_wall=$(since "$t")
state_size=$(du -sh "$work/mpi/.graph-ascend-shards" | cut -f1)
/usr/bin/time -f "$fmt" -o "$work/mpi.link.time" "$bin" link "$work/mpi" >/dev/null
echo "(b) mpirun -np 2:       shards ${shards_wall} s wall; shard 0 $(row "$work/mpi.0.time"); shard 1 $(row "$work/mpi.1.time"); link $(row "$work/mpi.link.time"); total $(since "$t") s"
"$same" "$work/one" "$work/mpi"

# (c) Slurm array of 2 + dependent link
"$root/scripts/slurm-local.sh" start "$work/slurm" >/dev/null
export SLURM_CONF="$work/slurm/slurm.conf"
cat > "$work/shards.sbatch" <<JOB
#!/bin/bash
#SBATCH --array=0-1
#SBATCH --cpus-per-task=1
#SBATCH --output=$work/slurm-%a.log
exec /usr/bin/time -f '$fmt' -o $work/slurm.\$SLURM_ARRAY_TASK_ID.time '$bin' graph -i '$config' -o '$work/sl' --shard
JOB
t=$(now)
array=$(sbatch --parsable "$work/shards.sbatch")
reduce=$(sbatch --parsable --dependency=afterok:"$array" --output="$work/link.log" \
  --wrap "exec /usr/bin/time -f '$fmt' -o $work/slurm.link.time '$bin' link '$work/sl'")
while [ -n "$(squeue -h -j "$array,$reduce" 2>/dev/null)" ]; do sleep 0.2; done
echo "(c) Slurm array of 2:   submit to linked $(since "$t") s; shard 0 $(row "$work/slurm.0.time"); shard 1 $(row "$work/slurm.1.time"); link $(row "$work/slurm.link.time")"
"$same" "$work/one" "$work/sl"
"$root/scripts/slurm-local.sh" stop "$work/slurm" >/dev/null
echo "output: $(ls "$work/one" | wc -l) files, $(du -sh "$work/one" | cut -f1); shard state (summaries + batch record) before link: $state_size"

if [ "$small" -gt 0 ]; then
  python3 "$root/bench/shards/make_batch.py" --ranks "$small" --out "$work/small" >/dev/null
  /usr/bin/time -f "$fmt" -o "$work/small.time" "$bin" graph_visualize -tp "$work/small/npu" -gp "$work/small/bench" \
    -o "$work/small-ga" >/dev/null
  echo "graph-ascend graph_visualize, $small ranks: $(row "$work/small.time")"
  "$root/bench/reference/run_msprobe.sh" --version 26.2.0-graph "$work/small/batch.json" "$work/small-msprobe" | tail -1 |
    sed "s/^/msprobe 26.2.0 graph_visualize, $small ranks: /"
fi
