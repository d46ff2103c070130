#!/usr/bin/env bash
# The main job on the bundled sample, on a fresh Debian 12 machine: installs
# everything, builds a compare .vis from samples/gpt_statistics (a LLaMA-style
# model whose npu run has a bf16 culprit in layer 1's MLP), starts TensorBoard
# on it and prints the URL. Ctrl-C stops TensorBoard.
#
#   scripts/demo.sh [--port N] [--host ADDR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
port=6006
host=127.0.0.1
while [ $# -gt 0 ]; do
  case $1 in
    --port) port=$2; shift 2 ;;
    --host) host=$2; shift 2 ;;
    *) echo "usage: scripts/demo.sh [--port N] [--host ADDR]" >&2; exit 2 ;;
  esac
done
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
"$root/scripts/python-env.sh"
"$root/scripts/install-plugin.sh"

out="$root/out/demo"
rm -rf "$out"
"$root/build/bin/graph-ascend" graph -i "$root/samples/gpt_statistics/compare.json" -o "$out" -oc
"$root/build/bin/graph-ascend" info "$out"/compare_*.vis | sed -n '1,40p'

"$root/.venv/bin/tensorboard" --logdir "$out" --host "$host" --port "$port" >"$root/out/tensorboard.log" 2>&1 &
tb=$!
trap 'kill $tb 2>/dev/null || true' EXIT INT TERM
url="http://$host:$port/#graph_ascend"
for _ in $(seq 120); do
  if curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "http://$host:$port/data/plugin/graph_ascend/api/Health" >/dev/null 2>&1; then
    echo
    echo "TensorBoard is serving $out"
    echo "Open $url  (Ctrl-C to stop)"
    wait $tb
    exit 0
  fi
  kill -0 $tb 2>/dev/null || { echo "tensorboard exited:" >&2; tail -20 "$root/out/tensorboard.log" >&2; exit 1; }
  sleep 0.5
done
echo "TensorBoard did not answer on port $port; see out/tensorboard.log" >&2
exit 1
