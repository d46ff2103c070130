#!/usr/bin/env bash
# Configures and builds the C++ tree into build/ (bin/graph-ascend,
# bin/graph-ascend-server, test binaries).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "${GA_JOBS:-$(nproc)}"
