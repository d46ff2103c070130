#!/usr/bin/env bash
# Issue 31's figures on a big machine in one short scripted run (docs/SCALE.md, "The 16-core run"): a batch
# of RANKS ranks of NODES-node pairs (hard links) built by one process at each --jobs of JOBS and as CORES
# shards + link (bench/batch/run.sh), then the compare of one BIG-node-a-side pair, by this build and, when
# packed, by the build before (bench/batch/pair.sh): wall, CPU, cores in use and peak RSS. Prints one table
# and writes it (and every log) under $OUT (or --out). Offline: the binaries come packed with their shared
# libraries (--pack, here), or are built when none are given (needs the build's packages installed).
# Each step is skipped, and said so, once the run has used BUDGET seconds, so the script ends in time.
#
#   bench/batch/device.sh --pack build-device [--before OLD_BINARY]   # here: binaries + libraries
#   bench/batch/device.sh --bin build-device                          # there (the run tool carries build-device)
#       [--ranks 64] [--nodes 100000] [--jobs "1 4 8 16"] [--cores 16] [--big 1000000] [--rounds 2]
#       [--budget 420] [--out DIR] [--work DIR]
#   bench/batch/device.sh --bin build-device --ranks 4 --nodes 10000 --big 20000 --jobs "1 2" --cores 2
#                                                                     # the dry run (a few seconds)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
start=$(date +%s)
pack="" before="" bin_dir=""
ranks=64 nodes=100000 jobs="1 4 8 16" cores=16 big=1000000 rounds=2 budget=420
out="${OUT:-/tmp/ga-device-out}"
work=/tmp/ga-device
while [ $# -gt 0 ]; do
  case $1 in
    --pack) pack=$2; shift 2 ;;
    --before) before=$2; shift 2 ;;
    --bin) bin_dir=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --big) big=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) sed -n '2,15p' "$0" >&2; exit 2 ;;
  esac
done

if [ -n "$pack" ]; then
  # The binaries and the shared libraries they load, but the C library's own (the loader uses the host's).
  rm -rf "$pack"
  mkdir -p "$pack/bin" "$pack/lib"
  cp "$root/build/bin/graph-ascend" "$root/build/bin/ga_same_graphs" "$pack/bin/"
  [ -z "$before" ] || cp "$before" "$pack/bin/before-graph-ascend"
  for b in "$pack"/bin/*; do
    ldd "$b" | awk '$3 ~ /^\// { print $3 }'
  done | sort -u | grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | while read -r lib; do
    cp -L "$lib" "$pack/lib/"
  done
  du -sh "$pack"
  exit 0
fi

mkdir -p "$out" "$work"
log="$out/device.log"
: >"$log"
say() { echo "$*" | tee -a "$log"; }
left() { echo $((budget - ($(date +%s) - start))); }
say "issue 31 device run: $(date -u +%FT%TZ), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 |
  sed 's/^ //')), $(free -g | awk '/Mem:/ { print $2 }') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"

# The binaries: packed (with their libraries), else built here.
if [ -n "$bin_dir" ] && [ -x "$bin_dir/bin/graph-ascend" ]; then
  bin_dir=$(cd "$bin_dir" && pwd)
  export LD_LIBRARY_PATH="$bin_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  bin="$bin_dir/bin/graph-ascend"
  if ! "$bin" --version >>"$log" 2>&1; then
    say "the packed binary does not run here (see $log); building"
    bin=""
  fi
else
  bin=""
fi
if [ -z "$bin" ]; then
  t0=$(date +%s)
  GA_JOBS=$(nproc) cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >>"$log" 2>&1
  timeout "$(left)" cmake --build "$root/build" -j "$(nproc)" --target graph-ascend ga_same_graphs >>"$log" 2>&1
  bin="$root/build/bin/graph-ascend"
  say "built in $(($(date +%s) - t0)) s"
fi
old="$(dirname "$bin")/before-graph-ascend"
[ -x "$old" ] || old=""

# The data: both pairs generated at once (the scaler is one Python process each).
t0=$(date +%s)
gen() {  # NODES DIR
  [ -f "$2/compare.json" ] || python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" \
    --nodes "$1" --out "$2" >/dev/null
}
gen "$nodes" "$work/pair_$nodes" &
small=$!
gen "$big" "$work/pair_$big" &
large=$!
wait "$small"
wait "$large"
say "generated the $nodes- and $big-node pairs in $(($(date +%s) - t0)) s"

table="$out/table.txt"
{
  echo "## issue 31 on $(nproc) cores, $(date -u +%FT%TZ)"
  echo
  echo "batch: $ranks ranks of $nodes-node pairs, one process at --jobs $jobs against $cores shards + link"
} >"$table"
if [ "$(left)" -gt 60 ]; then
  timeout "$(left)" "$root/bench/batch/run.sh" --ranks "$ranks" --nodes "$nodes" --cores "$cores" --jobs "$jobs" \
    --work "$work" --binary "$bin" 2>&1 | tee -a "$log" | tee -a "$table" || say "the batch step failed or ran out of time"
else
  say "skipped the batch: $(left) s left" | tee -a "$table"
fi
echo >>"$table"
if [ "$(left)" -gt 30 ]; then
  flags=(--nodes "$big" --rounds "$rounds" --work "$work" --binary "$bin")
  [ -z "$old" ] || flags+=(--before "$old")
  timeout "$(left)" "$root/bench/batch/pair.sh" "${flags[@]}" 2>&1 | tee -a "$log" | tee -a "$table" ||
    say "the pair step failed or ran out of time"
else
  say "skipped the $big-node pair: $(left) s left" | tee -a "$table"
fi
say "done in $(($(date +%s) - start)) s; table in $table"
echo
cat "$table"
