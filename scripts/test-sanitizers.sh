#!/usr/bin/env bash
# The C++ test suite under AddressSanitizer and UndefinedBehaviorSanitizer,
# in its own build directory (build-asan/), then a bounded fuzz run of every
# reader (bin/ga_fuzz, tests/fuzz/) in that build. Any sanitizer report fails.
#
#   scripts/test-sanitizers.sh                 # everything
#   GA_FUZZ_RUNS=20000 scripts/test-sanitizers.sh
#   GA_SANITIZE_SERVER=0 scripts/test-sanitizers.sh   # builder only (no gRPC server and its tests)
#   scripts/test-sanitizers.sh -R robustness   # extra arguments go to ctest
#   GA_SANITIZE_TARGETS="ga_fuzz robustness_test" scripts/test-sanitizers.sh -R robustness_test
#                                              # build only these targets (then pick their tests with -R)
#
# Not part of scripts/test.sh: building the tree a second time with
# sanitizers takes longer than CI's budget (docs/RELIABILITY.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_ASAN_BUILD_DIR:-$root/build-asan}"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DGRAPH_ASCEND_BUILD_SERVER="$([ "${GA_SANITIZE_SERVER:-1}" = 0 ] && echo OFF || echo ON)" >/dev/null
targets=()
for t in ${GA_SANITIZE_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "${GA_JOBS:-$(nproc)}" "${targets[@]}"

# An allocation above 4 GiB is a failure (a reader trusting a size it read),
# not a machine out of memory.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:max_allocation_size_mb=4096:allocator_may_return_null=0:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
cd "$build"
ctest --output-on-failure -j "${GA_JOBS:-$(nproc)}" "$@"
GA_SOURCE_DIR="$root" "$build/bin/ga_fuzz" --runs "${GA_FUZZ_RUNS:-3000}" --seed "${GA_FUZZ_SEED:-1}"
