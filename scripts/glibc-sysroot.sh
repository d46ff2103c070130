#!/usr/bin/env bash
# Makes the glibc the portable executables link against (cmake/Portable.cmake,
# GRAPH_ASCEND_GLIBC_SYSROOT): Debian 11's libc6 and libc6-dev (glibc 2.31) for
# x86_64 or aarch64, unpacked with `dpkg -x` into DIR. apt-get fetches them
# from Debian 11's archive with a private configuration under DIR (its own
# sources and package lists, signed with the Debian 11 key debian-archive-keyring
# ships), so the machine's apt setup is left as it is. Absolute symlinks
# (libdl.so -> /lib/...) are made relative, so the link never falls through
# to the machine's own glibc.
#
# Usage: scripts/glibc-sysroot.sh x86_64|aarch64 DIR. GA_GLIBC_MIRROR (default
# http://deb.debian.org/debian) is the archive. About 13 MB of downloads (the package
# list and the two packages), 25–30 MB unpacked.
set -euo pipefail
arch=${1:?usage: glibc-sysroot.sh x86_64|aarch64 DIR}
sysroot=$(realpath -m "${2:?usage: glibc-sysroot.sh x86_64|aarch64 DIR}")
case "$arch" in
  x86_64) debarch=amd64 ;;
  aarch64) debarch=arm64 ;;
  *) echo "usage: glibc-sysroot.sh x86_64|aarch64 DIR" >&2; exit 2 ;;
esac
mirror=${GA_GLIBC_MIRROR:-http://deb.debian.org/debian}
packages=(libc6:$debarch libc6-dev:$debarch)
stamp="$sysroot/.packages"
if [ "$(cat "$stamp" 2>/dev/null)" = "bullseye ${packages[*]}" ]; then
  exit 0
fi
rm -rf "$sysroot"
apt="$sysroot/.apt"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$sysroot/.debs"
echo "deb $mirror bullseye main" >"$apt/sources.list"
options=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
         -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Dir::State::status=/dev/null
         -o APT::Architectures::="$debarch" -o Acquire::Languages=none
         -o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
         -o Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false)
apt-get -qq "${options[@]}" update
[ "$(id -u)" -ne 0 ] || chown _apt "$sysroot/.debs" 2>/dev/null || true  # apt's download sandbox
(cd "$sysroot/.debs" && apt-get -qq "${options[@]}" download "${packages[@]}")
for deb in "$sysroot"/.debs/*.deb; do
  dpkg -x "$deb" "$sysroot"
done
rm -rf "$sysroot/.debs" "$apt"
find "$sysroot" -type l -lname '/*' | while read -r link; do
  ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" "$sysroot$(readlink "$link")")" "$link"
done
echo "bullseye ${packages[*]}" >"$stamp"
version=$(ls "$sysroot"/lib/*-linux-gnu/libc-*.so | sed 's/.*libc-\(.*\)\.so/\1/')
echo "glibc-sysroot: $sysroot (glibc $version, $(du -sh "$sysroot" | cut -f1))"
