#!/usr/bin/env bash
# Installs every system package graph-ascend needs on Debian 12 (build, tests, browser).
# Idempotent and cheap when nothing is missing (a dpkg-query per package, well under
# a second), so every script calls it first. What it installs is said on stderr; the
# "all present" line goes to stdout, which callers discard. (debian-archive-keyring
# holds the Debian 11 key scripts/glibc-sysroot.sh checks its download with.)
# `install-deps.sh aarch64` adds the cross compiler and qemu-user for
# scripts/build-wheel.sh aarch64 and scripts/test-aarch64.sh; `install-deps.sh cluster`
# adds Slurm and munge for scripts/test-cluster.sh (a one-node cluster, scripts/slurm-local.sh).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  ccache  # build.sh and build-wheel.sh use it: the test command's fresh-clone build is then all cache hits
  libprotobuf-dev protobuf-compiler libre2-dev
  libgrpc++-dev protobuf-compiler-grpc
  nlohmann-json3-dev libboost-graph-dev libyaml-cpp-dev libzstd-dev libsqlite3-dev
  zlib1g-dev
  libgtest-dev libgmock-dev googletest
  python3 python3-venv python3-pip
  chromium
  time curl ca-certificates debian-archive-keyring
  openmpi-bin
)

if [ "${1:-}" = aarch64 ]; then
  packages+=(g++-aarch64-linux-gnu qemu-user)
fi
if [ "${1:-}" = cluster ]; then
  packages+=(slurm-wlm munge bc)
fi

missing=()
# Node.js with npm usually comes preinstalled (nodesource); only fall back to Debian's.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all system packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
