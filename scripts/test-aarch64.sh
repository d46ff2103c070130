#!/usr/bin/env bash
# The aarch64 wheel, built on an x86_64 machine and smoke-tested under
# qemu-user (Debian's qemu-user; no binfmt needed) on Debian 11's arm64 glibc
# 2.31: scripts/build-wheel.sh aarch64, then from the unpacked wheel
# `graph-ascend graph` and `info` on a sample, a bad input caught as a C++
# exception, and graph-ascend-server answering Health over gRPC. Part of
# scripts/test.sh (the cross build is a second full compile, about 10 min of
# CPU: docs/PERFORMANCE.md, "Wheels"). Installs the cross compiler and
# qemu-user when missing; build-wheel.sh makes .venv.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" aarch64 >/dev/null
start=$SECONDS
"$root/scripts/build-wheel.sh" aarch64
wheel=$(ls -t "$root"/dist/graph_ascend-*-manylinux_*_aarch64.whl | head -1)
work=$(mktemp -d "${TMPDIR:-/tmp}/graph-ascend-aarch64.XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "test-aarch64: $*" >&2
  exit 1
}
"$root/.venv/bin/python" -m zipfile -e "$wheel" "$work/wheel"
bin="$work/wheel/graph_ascend_plugin/_bin"
chmod +x "$bin"/*
# Debian 11's arm64 glibc (2.31, made by build-wheel.sh): the oldest the wheel claims.
run() { qemu-aarch64 -L "$root/build-wheel/glibc-aarch64" "$@"; }

(cd "$root/samples/cnn_statistics" && run "$bin/graph-ascend" graph -i compare.json -o "$work/logdir/run" >"$work/graph.log" 2>&1) ||
  { cat "$work/graph.log" >&2; fail "graph-ascend graph failed under qemu"; }
vis=$(ls "$work"/logdir/run/compare_*.vis)
run "$bin/graph-ascend" info "$vis" >"$work/info.txt"
grep -q '^NPU: 436 nodes' "$work/info.txt" || { cat "$work/info.txt" >&2; fail "graph-ascend info: unexpected summary"; }
printf 'Module:\n  a: [b\n' >"$work/bad.yaml"  # yaml-cpp throws, layer_mapping.cc catches: the static unwinder
status=0
(cd "$root/samples/layer_mapping" && run "$bin/graph-ascend" graph -i compare.json -o "$work/mapped" -lm "$work/bad.yaml" 2>"$work/err.txt") ||
  status=$?
[ "$status" -eq 2 ] && grep -q "bad.yaml: line 3, column 1: cannot parse" "$work/err.txt" ||
  fail "a bad layer mapping gave exit $status: $(cat "$work/err.txt")"

run "$bin/graph-ascend-server" --logdir "$work/logdir" --socket "$work/server.sock" >"$work/server.log" 2>&1 &
server_pid=$!
PYTHONPATH="$work/wheel" "$root/.venv/bin/python" "$root/scripts/server-health.py" "$work/server.sock" "$(basename "$vis")" ||
  { cat "$work/server.log" >&2; fail "the server did not answer"; }
echo "test-aarch64: $(basename "$wheel") works under qemu-aarch64 ($((SECONDS - start)) s with the cross build)"
