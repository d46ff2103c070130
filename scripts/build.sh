#!/usr/bin/env bash
# Configures and builds the C++ tree into build/ (bin/graph-ascend,
# bin/graph-ascend-server, test binaries). Uses ccache when it is installed
# (several work trees of one machine then share compiled objects).
# GA_PORTABLE=1 links bin/graph-ascend and bin/graph-ascend-server as the
# wheel ships them (GRAPH_ASCEND_PORTABLE, cmake/Portable.cmake, against
# Debian 11's glibc from scripts/glibc-sysroot.sh); the test
# command does, so that scripts/build-wheel.sh packages this very build.
# Installs the system packages first when some are missing (scripts/install-deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" >/dev/null
build="${GA_BUILD_DIR:-$root/build}"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
portable=(-DGRAPH_ASCEND_PORTABLE=OFF)
if [ "${GA_PORTABLE:-0}" = 1 ]; then
  "$root/scripts/glibc-sysroot.sh" "$(uname -m)" "$root/build-wheel/glibc-$(uname -m)"
  portable=(-DGRAPH_ASCEND_PORTABLE=ON -DGRAPH_ASCEND_GLIBC_SYSROOT="$root/build-wheel/glibc-$(uname -m)")
fi
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${portable[@]}" "${launcher[@]}" >/dev/null
cmake --build "$build" -j "${GA_JOBS:-$(nproc)}"
