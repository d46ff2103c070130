#!/usr/bin/env bash
# Builds the graph-ascend wheel for x86_64 or aarch64 into dist/:
#   scripts/build-wheel.sh [x86_64|aarch64]      (default: this machine's)
# The wheel holds the `graph-ascend` command, the TensorBoard plugin, the page
# and the two C++ executables built with GRAPH_ASCEND_PORTABLE=ON (static but
# for glibc, which is Debian 11's 2.31 from scripts/glibc-sysroot.sh), and is
# tagged py3-none-manylinux_2_<N>_<arch>, N being the newest glibc symbol
# version the executables refer to.
#
# aarch64 on an x86_64 host is a cross build (cmake/aarch64-linux-gnu.cmake,
# sysroot from scripts/aarch64-sysroot.sh; scripts/install-deps.sh aarch64).
# GA_WHEEL_BUILD_DIR (default build-wheel/<arch>) is the CMake build directory;
# it may be build/ when that is configured with GA_PORTABLE=1 scripts/build.sh.
# Works alone on a fresh clone: it installs the system packages that are missing
# (scripts/install-deps.sh, with the cross compiler for aarch64) and makes the
# project's .venv (scripts/python-env.sh: pip, setuptools, auditwheel), each a
# second or less when already there. scripts/test-fresh-clone.sh checks that.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-$(uname -m)}
case "$arch" in
  x86_64 | aarch64) ;;
  *) echo "usage: build-wheel.sh [x86_64|aarch64]" >&2; exit 2 ;;
esac
build=$(realpath -m "${GA_WHEEL_BUILD_DIR:-$root/build-wheel/$arch}")  # absolute: setup.py runs elsewhere
python="$root/.venv/bin/python"
deps=()
[ "$arch" = "$(uname -m)" ] || deps=(aarch64)
"$root/scripts/install-deps.sh" "${deps[@]}" >/dev/null
"$root/scripts/python-env.sh"

# 1. The portable executables.
glibc="$root/build-wheel/glibc-$arch"
"$root/scripts/glibc-sysroot.sh" "$arch" "$glibc"
args=(-DCMAKE_BUILD_TYPE=Release -DGRAPH_ASCEND_PORTABLE=ON -DGRAPH_ASCEND_GLIBC_SYSROOT="$glibc")
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$root")}"
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
readelf=readelf
if [ "$arch" != "$(uname -m)" ]; then
  if [ "$arch" != aarch64 ] || [ "$(uname -m)" != x86_64 ]; then
    echo "build-wheel: cannot build $arch on $(uname -m)" >&2
    exit 2
  fi
  sysroot="$root/build-wheel/aarch64-sysroot"
  "$root/scripts/aarch64-sysroot.sh" "$sysroot"
  args+=(-DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" -DGA_AARCH64_SYSROOT="$sysroot"
         -DGRAPH_ASCEND_BUILD_TESTS=OFF)
  readelf=aarch64-linux-gnu-readelf
fi
cmake -S "$root" -B "$build" -G Ninja "${args[@]}" >/dev/null
cmake --build "$build" -j "${GA_JOBS:-$(nproc)}" --target graph-ascend graph-ascend-server

# 2. What they need from the target machine: glibc only, and which glibc.
floor=0
for exe in graph-ascend graph-ascend-server; do
  needed=$("$readelf" -dW "$build/bin/$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  for lib in $needed; do
    case "$lib" in
      libc.so.6 | libm.so.6 | ld-linux-*.so.* | libpthread.so.0 | libdl.so.2 | librt.so.1) ;;
      *) echo "build-wheel: $exe needs $lib, which a user's machine may not have" >&2; exit 1 ;;
    esac
  done
  minor=$("$readelf" --dyn-syms -W "$build/bin/$exe" | grep -o '@GLIBC_2\.[0-9]*' | cut -d. -f2 | sort -n | tail -1)
  [ "${minor:-0}" -gt "$floor" ] && floor=$minor
done
platform="manylinux_2_${floor}_$arch"

# 3. The page and the wheel.
"$root/scripts/build-page.sh"
mkdir -p "$root/dist"
rm -f "$root/dist/graph_ascend-"*"-$platform.whl"
rm -rf "$root/plugin/python/build"  # setuptools' staging area: no executable of another build in the wheel
GA_CLI_BINARY="$build/bin/graph-ascend" GA_SERVER_BINARY="$build/bin/graph-ascend-server" GA_WHEEL_PLATFORM="$platform" \
  "$python" -m pip wheel -q --no-deps --no-build-isolation -w "$root/dist" "$root/plugin/python"
wheel=$(ls "$root/dist/graph_ascend-"*"-$platform.whl")
# A second opinion on the tag: auditwheel reads the same symbol versions its own way
# and names the first of its policies (2_17, 2_24, 2_28, 2_31, 2_34, ...) that allows them.
audit=$("$root/.venv/bin/auditwheel" show "$wheel" | tr '\n' ' ')
policy=$(echo "$audit" | sed -n "s/.*constrains the platform tag to \"manylinux_2_\([0-9]*\)_$arch\".*/\1/p")
if [ -z "$policy" ] || [ "$policy" -lt "$floor" ]; then
  echo "$audit" >&2
  echo "build-wheel: auditwheel does not agree with $platform" >&2
  exit 1
fi
echo "build-wheel: $wheel ($(du -h "$wheel" | cut -f1), glibc >= 2.$floor)"
