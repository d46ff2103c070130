#!/usr/bin/env bash
# C++ unit and end-to-end tests (GoogleTest through ctest), then a bounded
# fuzz run of every reader with a fresh seed (ga_fuzz, tests/fuzz/): the
# seed is printed first, so that a failure can be run again with it
# (GA_FUZZ_SEED=K scripts/test-cpp.sh), and a failing input is saved under
# build/fuzz-crashes/. GA_FUZZ_SECONDS (default 5) is the time per target;
# 0 leaves the fuzz run out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
jobs="${GA_JOBS:-$(nproc)}"
# Alone on a fresh clone: build the tree first (a given GA_BUILD_DIR is used as it is).
[ -n "${GA_BUILD_DIR:-}" ] || [ -f "$build/CTestTestfile.cmake" ] || "$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$jobs"

seconds="${GA_FUZZ_SECONDS:-5}"
[ "$seconds" = 0 ] && exit 0
seed="${GA_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
crashes="$build/fuzz-crashes"
mkdir -p "$crashes"
logs=$(mktemp -d "${TMPDIR:-/tmp}/ga-fuzz.XXXXXX")
echo "test-cpp: ga_fuzz --seed $seed, $seconds s per target on $jobs shards (again: GA_FUZZ_SEED=$seed scripts/test-cpp.sh)"
pids=()
for ((shard = 0; shard < jobs; shard++)); do
  GA_SOURCE_DIR="$root" "$build/bin/ga_fuzz" --seconds "$seconds" --seed "$seed" --shard "$shard/$jobs" \
    --crash-dir "$crashes" >"$logs/$shard.log" 2>&1 &
  pids+=($!)
done
failed=0
for ((shard = 0; shard < jobs; shard++)); do
  if ! wait "${pids[$shard]}"; then failed=1; fi
  cat "$logs/$shard.log"
done
rm -rf "$logs"
if [ "$failed" != 0 ]; then
  echo "test-cpp: ga_fuzz --seed $seed failed; the failing input is in $crashes (its line above says how to replay it)" >&2
  exit 1
fi
