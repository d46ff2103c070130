#!/usr/bin/env bash
# The wheel as a user gets it: a fresh virtual environment, `pip install` of
# dist/graph_ascend-*-manylinux_*_<arch>.whl (its Python dependencies from PyPI,
# held to requirements-dev.txt's versions so CI is repeatable), and from then
# on nothing of the build tree on PATH. Checks, through the installed package:
#   1. `graph-ascend graph` on a sample and `graph-ascend info` on its .vis file,
#      and bad inputs naming the file, exit 2 (one of them a C++ exception
#      caught inside: the statically linked unwinder at work); the installed
#      executables again on the oldest glibc the wheel claims, Debian 11's 2.31
#      (its own ld.so and libc from scripts/glibc-sysroot.sh);
#      `import graph_ascend` (the Python API) opening that file;
#   2. `tensorboard --logdir` with the installed plugin answering its routes
#      (the page, Health, ListRuns, GetFileInfo);
#   3. the Playwright suite (scripts/test-browser.sh) against that venv's tensorboard.
# Usage: scripts/test-wheel.sh [WHEEL] (default: the newest of dist/, built by
# scripts/build-wheel.sh when there is none). GA_WHEEL_VENV (default build-wheel/venv) is
# the environment, made anew each run. Prints the install time and the wheel size.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" >/dev/null
newest() { ls -t "$root"/dist/graph_ascend-*-manylinux_*_"$(uname -m)".whl 2>/dev/null | head -1; }
if [ $# -eq 0 ] && [ -z "$(newest)" ]; then
  "$root/scripts/build-wheel.sh"
fi
wheel=${1:-$(newest)}
if [ ! -f "$wheel" ]; then
  echo "test-wheel: no wheel at '$wheel'" >&2
  exit 1
fi
venv="${GA_WHEEL_VENV:-$root/build-wheel/venv}"
rm -rf "$venv"
python3 -m venv "$venv"
started=$EPOCHREALTIME
"$venv/bin/python" -m pip install -q -c "$root/requirements-dev.txt" "$wheel"
echo "test-wheel: installed $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) in" \
  "$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $started }") s"

export PATH="$venv/bin:/usr/local/bin:/usr/bin:/bin"
unset PYTHONPATH GRAPH_ASCEND_BINARY GRAPH_ASCEND_SERVER_BINARY
work=$(mktemp -d "${TMPDIR:-/tmp}/graph-ascend-wheel.XXXXXX")
tb_pid=""
server_pid=""
cleanup() {
  for pid in $tb_pid $server_pid; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "test-wheel: $*" >&2
  exit 1
}

# 1. The command.
[ "$(command -v graph-ascend)" = "$venv/bin/graph-ascend" ] || fail "graph-ascend is not the venv's console script"
(cd "$root/samples/cnn_statistics" && graph-ascend graph -i compare.json -o "$work/logdir/run" >"$work/graph.log" 2>&1) ||
  { cat "$work/graph.log" >&2; fail "graph-ascend graph failed"; }
vis=$(ls "$work"/logdir/run/compare_*.vis)
graph-ascend info "$vis" >"$work/info.txt"
grep -q '^NPU: 436 nodes' "$work/info.txt" || { cat "$work/info.txt" >&2; fail "graph-ascend info: unexpected summary"; }
status=0
graph-ascend info "$work/missing.vis" 2>"$work/err.txt" || status=$?
[ "$status" -eq 2 ] && grep -q "missing.vis" "$work/err.txt" || fail "a missing file gave exit $status: $(cat "$work/err.txt")"
printf 'Module:\n  a: [b\n' >"$work/bad.yaml"  # yaml-cpp throws; layer_mapping.cc catches
bad_mapping() {
  local status=0
  (cd "$root/samples/layer_mapping" && "$@" graph -i compare.json -o "$work/mapped" -lm "$work/bad.yaml" 2>"$work/err.txt") ||
    status=$?
  [ "$status" -eq 2 ] && grep -q "bad.yaml: line 3, column 1: cannot parse" "$work/err.txt" ||
    fail "a bad layer mapping gave exit $status: $(cat "$work/err.txt")"
}
bad_mapping graph-ascend

glibc="${GA_GLIBC_SYSROOT:-$root/build-wheel/glibc-$(uname -m)}"
"$root/scripts/glibc-sysroot.sh" "$(uname -m)" "$glibc"
bin=$("$venv/bin/python" -c 'import graph_ascend_plugin, os; print(os.path.dirname(graph_ascend_plugin.__file__))')/_bin
old_glibc() { "$glibc"/lib*/ld-linux-*.so.* --library-path "$glibc/lib/$(uname -m)-linux-gnu" "$@"; }
(cd "$root/samples/cnn_statistics" && old_glibc "$bin/graph-ascend" graph -i compare.json -o "$work/old" >"$work/graph.log" 2>&1) ||
  { cat "$work/graph.log" >&2; fail "graph-ascend graph failed on glibc 2.31"; }
old_glibc "$bin/graph-ascend" info "$work"/old/compare_*.vis | grep -q '^NPU: 436 nodes' ||
  fail "graph-ascend info on glibc 2.31: unexpected summary"
bad_mapping old_glibc "$bin/graph-ascend"
old_glibc "$bin/graph-ascend-server" --logdir "$work/logdir" --socket "$work/server.sock" >"$work/server.log" 2>&1 &
server_pid=$!
python "$root/scripts/server-health.py" "$work/server.sock" "$(basename "$vis")" ||
  { cat "$work/server.log" >&2; fail "graph-ascend-server on glibc 2.31 did not answer"; }
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""
echo "test-wheel: the installed executables work on glibc 2.31"

# 1b. The Python API (docs/PYTHON_API.md) from the installed wheel: typed, its own graph service.
python - "$vis" >"$work/api.txt" 2>&1 <<'EOF' || { cat "$work/api.txt" >&2; fail "the Python API failed"; }
import pathlib, sys
import graph_ascend
assert (pathlib.Path(graph_ascend.__file__).parent / "py.typed").is_file(), "no py.typed in the wheel"
with graph_ascend.open(sys.argv[1]) as f:
    print(f.node_count("npu"), f.first_divergence().name)
EOF
grep -qx '436 Functional.batch_norm.6.forward' "$work/api.txt" || fail "the Python API answered: $(cat "$work/api.txt")"
echo "test-wheel: the Python API answers from the installed wheel"

# 2. TensorBoard with the installed plugin.
port=$(python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
tensorboard --logdir "$work/logdir" --host 127.0.0.1 --port "$port" >"$work/tensorboard.log" 2>&1 &
tb_pid=$!
api="http://127.0.0.1:$port/data/plugin/graph_ascend"
call() { curl -sf -X POST -H 'Content-Type: application/json' -d "$2" "$api/api/$1"; }
for _ in $(seq 120); do
  call Health '{}' >"$work/health.json" 2>/dev/null && break
  kill -0 "$tb_pid" 2>/dev/null || { tail -20 "$work/tensorboard.log" >&2; fail "tensorboard exited"; }
  sleep 0.5
done
grep -q '"version": *"0.1.0"' "$work/health.json" || fail "Health: $(cat "$work/health.json" 2>/dev/null)"
call ListRuns '{}' | grep -q "\"path\": *\"run/$(basename "$vis")\"" || fail "ListRuns does not list run/$(basename "$vis")"
call GetFileInfo "{\"file\": \"run/$(basename "$vis")\"}" | grep -q '"npu"' || fail "GetFileInfo gave no NPU summary"
curl -sf "$api/index.html" | cmp -s - "$root/frontend/dist/index.html" || fail "the installed plugin does not serve the built page"
kill "$tb_pid"
wait "$tb_pid" 2>/dev/null || true
tb_pid=""
echo "test-wheel: graph-ascend graph/info and the plugin's routes work from the installed wheel"

# 3. The browser suite against this venv.
GA_VENV="$venv" GA_INSTALLED=1 "$root/scripts/test-browser.sh"
