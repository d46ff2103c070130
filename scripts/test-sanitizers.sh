#!/usr/bin/env bash
# The C++ test suite under AddressSanitizer and UndefinedBehaviorSanitizer,
# in its own build directory (build-asan/, graph-ascend-server and the
# service's tests included), then the Python plugin tests against that
# sanitized graph-ascend-server (through a real tensorboard), then a bounded
# fuzz run of every reader (bin/ga_fuzz, tests/fuzz/) in that build. Any
# sanitizer report fails, also one the server writes while the plugin tests
# drive it (the reports go to files there, since the plugin keeps the
# server's output in a temporary directory).
#
#   scripts/test-sanitizers.sh                 # everything
#   GA_FUZZ_RUNS=20000 scripts/test-sanitizers.sh
#   GA_FUZZ_SECONDS=60 scripts/test-sanitizers.sh      # 60 s per fuzz target instead of a run count
#   GA_FUZZ_RUNS=0 scripts/test-sanitizers.sh          # no fuzz run
#   GA_FUZZ_SEED=K scripts/test-sanitizers.sh          # the fuzz run of seed K (default: a fresh one, printed)
#   GA_SANITIZE_PYTHON=0 scripts/test-sanitizers.sh    # no Python plugin tests
#   GA_SANITIZE_SERVER=0 scripts/test-sanitizers.sh    # builder only (no gRPC server, its tests, the plugin tests)
#   scripts/test-sanitizers.sh -R robustness   # extra arguments go to ctest
#   GA_SANITIZE_TARGETS="ga_fuzz robustness_test" scripts/test-sanitizers.sh -R robustness_test
#                                              # build only these targets (then pick their tests with -R)
#
# The Python step installs the plugin into .venv with the sanitized
# executables (scripts/test-python.sh puts build/'s back). -O1: what the
# sanitizers' authors recommend, and about half the compile time of -O2 on
# the 2 cores the project has.
#
# Not part of scripts/test.sh: building the tree a second time with
# sanitizers takes longer than CI's budget (docs/RELIABILITY.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_ASAN_BUILD_DIR:-$root/build-asan}"
server="${GA_SANITIZE_SERVER:-1}"
"$root/scripts/install-deps.sh" >/dev/null  # alone on a fresh clone
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DGRAPH_ASCEND_BUILD_SERVER="$([ "$server" = 0 ] && echo OFF || echo ON)" >/dev/null
targets=()
for t in ${GA_SANITIZE_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "${GA_JOBS:-$(nproc)}" "${targets[@]}"

# An allocation above 4 GiB is a failure (a reader trusting a size it read),
# not a machine out of memory. Debian's gRPC and protobuf are not
# instrumented: the suppressions name what of theirs is reported and why.
asan_options="detect_leaks=1:max_allocation_size_mb=4096:allocator_may_return_null=0:abort_on_error=1"
export ASAN_OPTIONS="${ASAN_OPTIONS:-$asan_options}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0}"
cd "$build"
ctest --output-on-failure -j "${GA_JOBS:-$(nproc)}" "$@"

if [ "$server" != 0 ] && [ "${GA_SANITIZE_PYTHON:-1}" != 0 ]; then
  "$root/scripts/python-env.sh"
  GA_BUILD_DIR="$build" "$root/scripts/install-plugin.sh"
  reports=$(mktemp -d "${TMPDIR:-/tmp}/ga-sanitizer-reports.XXXXXX")
  echo "test-sanitizers: Python plugin tests against $build/bin/graph-ascend-server (reports in $reports)"
  (cd "$root" && GA_BUILD_DIR="$build" GRAPH_ASCEND_SERVER_BINARY="$build/bin/graph-ascend-server" \
    ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan" UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan" \
    "$root/.venv/bin/python" -m pytest -q tests/python/plugin)
  if [ -n "$(ls -A "$reports")" ]; then
    cat "$reports"/* >&2
    echo "test-sanitizers: sanitizer reports from the Python plugin tests above ($reports)" >&2
    exit 1
  fi
  rmdir "$reports"
fi

if [ -n "${GA_FUZZ_SECONDS:-}" ]; then
  GA_SOURCE_DIR="$root" "$build/bin/ga_fuzz" --seconds "$GA_FUZZ_SECONDS" --seed "${GA_FUZZ_SEED:-random}"
elif [ "${GA_FUZZ_RUNS:-3000}" != 0 ]; then
  GA_SOURCE_DIR="$root" "$build/bin/ga_fuzz" --runs "${GA_FUZZ_RUNS:-3000}" --seed "${GA_FUZZ_SEED:-random}"
fi
