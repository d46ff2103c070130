#!/usr/bin/env bash
# The aarch64 wheel, built on an x86_64 machine and smoke-tested under
# qemu-user (Debian's qemu-user; no binfmt needed): scripts/build-wheel.sh
# aarch64, then from the unpacked wheel `graph-ascend graph` and `info` on a
# sample and graph-ascend-server answering Health over gRPC. Not part of
# scripts/test.sh: the cross build is a second full compile (see
# docs/PERFORMANCE.md, "Wheels"). Needs scripts/install-deps.sh aarch64 and
# scripts/python-env.sh first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
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
run() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"; }

(cd "$root/samples/cnn_statistics" && run "$bin/graph-ascend" graph -i compare.json -o "$work/logdir/run" >"$work/graph.log" 2>&1) ||
  { cat "$work/graph.log" >&2; fail "graph-ascend graph failed under qemu"; }
vis=$(ls "$work"/logdir/run/compare_*.vis)
run "$bin/graph-ascend" info "$vis" >"$work/info.txt"
grep -q '^NPU: 436 nodes' "$work/info.txt" || { cat "$work/info.txt" >&2; fail "graph-ascend info: unexpected summary"; }

run "$bin/graph-ascend-server" --logdir "$work/logdir" --socket "$work/server.sock" >"$work/server.log" 2>&1 &
server_pid=$!
PYTHONPATH="$work/wheel" "$root/.venv/bin/python" - "$work/server.sock" "$(basename "$vis")" <<'PY' || { cat "$work/server.log" >&2; fail "the server did not answer"; }
import sys
import grpc
from graph_ascend_plugin._proto import graph_service_pb2 as pb, graph_service_pb2_grpc as rpc

channel = grpc.insecure_channel(f"unix:{sys.argv[1]}")
grpc.channel_ready_future(channel).result(timeout=60)
stub = rpc.GraphServiceStub(channel)
health = stub.Health(pb.HealthRequest(), timeout=30)
runs = stub.ListRuns(pb.ListRunsRequest(), timeout=30)
assert health.version == "0.1.0", health
assert [f.path for f in runs.files] == [f"run/{sys.argv[2]}"], runs
print(f"test-aarch64: Health {health.version}, ListRuns {runs.files[0].path}")
PY
echo "test-aarch64: $(basename "$wheel") works under qemu-aarch64"
