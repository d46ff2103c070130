#!/usr/bin/env bash
# A longer fuzz run of every reader: bin/ga_fuzz for a time per target, in
# the sanitizer build when there is one (scripts/test-sanitizers.sh makes it),
# else in build/, with a fresh seed (printed first) unless --seed is given.
# Failing inputs are saved as crash-<target>-*.bin in the working directory;
# once fixed, each goes into tests/fuzz/corpus/<target>/ (ctest fuzz_corpus
# replays them). Figures of a run: docs/RELIABILITY_FIGURES.md.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [ga_fuzz options, e.g. --target pt --seed 7]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds="${1:-60}"
shift || true
build="$root/build"
if [ -x "$root/build-asan/bin/ga_fuzz" ]; then build="$root/build-asan"; fi
[ -x "$build/bin/ga_fuzz" ] || "$root/scripts/build.sh"  # alone on a fresh clone
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:max_allocation_size_mb=4096:allocator_may_return_null=0:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
echo "ga_fuzz from $build, $seconds s per target" >&2
GA_SOURCE_DIR="$root" exec "$build/bin/ga_fuzz" --seconds "$seconds" --seed random "$@"
