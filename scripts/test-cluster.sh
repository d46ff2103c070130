#!/usr/bin/env bash
# Shards on real engines against the one-process batch (docs/SCALE.md):
#   1. Open MPI: mpirun -np 2 graph-ascend graph ... --shard, then graph-ascend link;
#   2. Slurm: a one-node cluster (scripts/slurm-local.sh), an sbatch --array of 2 shards
#      and a reduce job (graph-ascend link) that depends on the array;
# each output folder compared with the one-process batch (bin/ga_same_graphs: the same
# graph content, time stamps aside). Uses build/ (made by scripts/build.sh when missing); installs
# openmpi-bin, slurm-wlm and munge when missing (scripts/install-deps.sh cluster).
# Usage: scripts/test-cluster.sh [CASE_DIR ...]   (default: samples/dist_gloo samples/parallel_merge;
# a case's batch.json, else its compare.json)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
bin="$build/bin/graph-ascend"
same="$build/bin/ga_same_graphs"
"$root/scripts/install-deps.sh" cluster >/dev/null
[ -n "${GA_BUILD_DIR:-}" ] || { [ -x "$bin" ] && [ -x "$same" ]; } || "$root/scripts/build.sh"
[ -x "$bin" ] && [ -x "$same" ] || { echo "test-cluster: $bin or $same is missing" >&2; exit 2; }
work=$(mktemp -d /tmp/ga-cluster-XXXXXX)
cluster="$work/slurm"
cleanup() {
  "$root/scripts/slurm-local.sh" stop "$cluster" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=("$root/samples/dist_gloo" "$root/samples/parallel_merge")
"$root/scripts/slurm-local.sh" start "$cluster"
export SLURM_CONF="$cluster/slurm.conf"
status=0
for case_dir in "${cases[@]}"; do
  name=$(basename "$case_dir")
  config="$case_dir/batch.json"
  [ -f "$config" ] || config="$case_dir/compare.json"
  out="$work/$name"
  mkdir -p "$out"
  "$bin" graph -i "$config" -o "$out/whole" >/dev/null

  # Open MPI: two processes, each takes its shard from OMPI_COMM_WORLD_RANK/SIZE.
  start=$(date +%s.%N)
  mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" graph -i "$config" -o "$out/mpi" --shard >/dev/null
  "$bin" link "$out/mpi" >/dev/null
  echo "test-cluster: $name mpirun -np 2 + link: $(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f') s"
  "$same" "$out/whole" "$out/mpi" || status=1

  # Slurm: an array of two shards (SLURM_ARRAY_TASK_ID/COUNT) and the reduce job after it.
  cat > "$out/shards.sbatch" <<JOB
#!/bin/bash
#SBATCH --job-name=ga-shards
#SBATCH --array=0-1
#SBATCH --output=$out/shard-%a.log
exec "$bin" graph -i "$config" -o "$out/slurm" --shard
JOB
  start=$(date +%s.%N)
  array=$(sbatch --parsable "$out/shards.sbatch")
  reduce=$(sbatch --parsable --dependency=afterok:"$array" --job-name=ga-link --output="$out/link.log" \
    --wrap "exec '$bin' link '$out/slurm'")
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$array,$reduce" 2>/dev/null)" ] && break
    sleep 0.5
  done
  echo "test-cluster: $name sbatch --array=0-1 + dependent link (jobs $array, $reduce): $(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f') s"
  if [ -d "$out/slurm/.graph-ascend-shards" ] || ! grep -q . "$out/link.log"; then
    echo "test-cluster: the Slurm reduce job did not link:" >&2
    cat "$out"/shard-*.log "$out/link.log" >&2 || true
    status=1
  fi
  "$same" "$out/whole" "$out/slurm" || status=1
done
[ $status -eq 0 ] && echo "test-cluster: all engines gave the one-process batch" || echo "test-cluster: FAILED" >&2
exit $status
