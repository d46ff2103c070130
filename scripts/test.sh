#!/usr/bin/env bash
# The test command: installs everything needed on a fresh Debian 12 machine
# and runs every test (C++, Python, and through the installed wheel: the
# command, the plugin's routes and the browser suite), and shards on a one-node
# Slurm cluster and under mpirun (scripts/test-cluster.sh). Used by .ci/run.
# The build is the portable one (GA_PORTABLE=1: static but for glibc, linked
# against Debian 11's glibc 2.31), so the wheel packages the executables the
# C++ and Python tests ran, and test-wheel.sh runs them on glibc 2.31 too;
# then the aarch64 wheel is cross-built and smoke-tested under qemu-user
# (scripts/test-aarch64.sh: a second full build, about 10 min of CPU).
# Last, scripts/test-fresh-clone.sh runs `scripts/build-wheel.sh x86_64` alone
# in a fresh clone, as the README gives it (the compiler cache and npm's and
# pip's caches keep it to a few minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
GA_PORTABLE=1 "$root/scripts/build.sh"
"$root/scripts/python-env.sh"
status=0
"$root/scripts/test-cpp.sh" || status=1
"$root/scripts/test-python.sh" || status=1
"$root/scripts/test-op-scripts.sh" || status=1
"$root/scripts/test-cluster.sh" || status=1
{ GA_WHEEL_BUILD_DIR="$root/build" "$root/scripts/build-wheel.sh" && "$root/scripts/test-wheel.sh"; } || status=1
"$root/scripts/test-aarch64.sh" || status=1
"$root/scripts/test-fresh-clone.sh" || status=1
exit $status
