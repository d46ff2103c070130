#!/usr/bin/env bash
# Makes the aarch64 sysroot the cross build links against (cmake/aarch64-linux-gnu.cmake):
# Debian 12's arm64 -dev packages (static archives, headers, CMake and pkg-config files)
# unpacked into one directory with `dpkg -x`, not installed, so the machine's own
# packages are left as they are (libyaml-cpp-dev is not co-installable across
# architectures, and installing :arm64 libraries would upgrade their amd64 twins).
# Header-only Boost and nlohmann-json and the host's code generators (grpc_cpp_plugin)
# are linked in from the host: same Debian versions, architecture-independent.
#
# Usage: scripts/aarch64-sysroot.sh DIR. Needs the cross compiler (g++-aarch64-linux-gnu,
# scripts/install-deps.sh aarch64) and dpkg's arm64 architecture with its package lists.
set -euo pipefail
sysroot=${1:?usage: aarch64-sysroot.sh DIR}
packages=(
  libgrpc++-dev libgrpc-dev libgrpc29 libgrpc++1.51
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 libprotoc32
  libabsl-dev libabsl20220623 libre2-dev libre2-9 libyaml-cpp-dev libyaml-cpp0.7
  libzstd-dev libzstd1 libc-ares-dev libc-ares2 libssl-dev libssl3 zlib1g-dev zlib1g
  libsqlite3-dev libsqlite3-0
)
stamp="$sysroot/.packages"
if [ "$(cat "$stamp" 2>/dev/null)" = "${packages[*]}" ]; then
  exit 0
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
fi
rm -rf "$sysroot"
mkdir -p "$sysroot/debs"
(cd "$sysroot/debs" && apt-get download -qq "${packages[@]/%/:arm64}")
for deb in "$sysroot"/debs/*.deb; do
  dpkg -x "$deb" "$sysroot"
done
rm -rf "$sysroot/debs"
for dir in boost nlohmann; do
  ln -sfn "/usr/include/$dir" "$sysroot/usr/include/$dir"
done
mkdir -p "$sysroot/usr/share/cmake" "$sysroot/usr/bin"
ln -sfn /usr/share/cmake/nlohmann_json "$sysroot/usr/share/cmake/nlohmann_json"
for plugin in /usr/bin/grpc_*_plugin; do
  ln -sfn "$plugin" "$sysroot/usr/bin/$(basename "$plugin")"
done
echo "${packages[*]}" > "$stamp"
echo "aarch64-sysroot: $sysroot ($(du -sh "$sysroot" | cut -f1))"
