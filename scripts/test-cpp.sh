#!/usr/bin/env bash
# C++ unit and end-to-end tests (GoogleTest through ctest).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j "${GA_JOBS:-$(nproc)}"
