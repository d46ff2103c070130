#!/usr/bin/env bash
# Browser tests: Playwright (npm) driving Debian's Chromium against a real
# tensorboard with the GRAPH_ASCEND plugin installed, over .vis files that
# build/bin/graph-ascend makes from samples/.
#
# On a fresh clone it first makes what is missing: system packages
# (scripts/install-deps.sh), build/ (scripts/build.sh) and .venv
# (scripts/python-env.sh). Steps: npm ci in frontend/ (skipped when the lockfile did not
# change), build the page, install the plugin with that page into .venv,
# build the .vis files into a temporary log directory, start tensorboard on a
# free port, run Playwright, stop tensorboard. Screenshots stay in
# frontend/test-results; one is copied to docs/screenshot.png (see step 5).
#
# GA_BUILD_DIR (default build/) and GA_VENV (default .venv) select another
# build or virtual environment; extra arguments go to `playwright test`.
# GA_INSTALLED=1: GA_VENV already holds the graph-ascend package (the wheel,
# scripts/test-wheel.sh); step 1 then installs nothing and the .vis files are
# made by that venv's `graph-ascend` command.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${GA_BUILD_DIR:-$root/build}"
venv="${GA_VENV:-$root/.venv}"
frontend="$root/frontend"
"$root/scripts/install-deps.sh" >/dev/null
if [ "${GA_INSTALLED:-0}" != 1 ]; then  # a build and a venv given by GA_BUILD_DIR and GA_VENV are the caller's
  [ -n "${GA_BUILD_DIR:-}" ] || [ -x "$build/bin/graph-ascend-server" ] || "$root/scripts/build.sh"
  [ -n "${GA_VENV:-}" ] || "$root/scripts/python-env.sh"
fi
if [ "${GA_INSTALLED:-0}" = 1 ]; then
  cli="$venv/bin/graph-ascend"
  needs=("$cli" "$venv/bin/python" /usr/bin/chromium)
else
  cli="$build/bin/graph-ascend"
  needs=("$cli" "$build/bin/graph-ascend-server" "$venv/bin/python" /usr/bin/chromium)
fi

for need in "${needs[@]}"; do
  if [ ! -e "$need" ]; then
    echo "test-browser: $need is missing" >&2
    exit 1
  fi
done

# 1. The page (npm ci when the lockfile changed, npm run build) and the plugin serving it.
if [ "${GA_INSTALLED:-0}" = 1 ]; then
  "$root/scripts/build-page.sh"
else
  GA_BUILD_DIR="$build" GA_VENV="$venv" "$root/scripts/install-plugin.sh" >/dev/null
fi
installed=$("$venv/bin/python" -c 'import graph_ascend_plugin, pathlib; print(pathlib.Path(graph_ascend_plugin.__file__).parent / "static" / "index.html")')
if ! cmp -s "$installed" "$frontend/dist/index.html"; then
  echo "test-browser: the installed plugin does not serve frontend/dist/index.html ($installed)" >&2
  exit 1
fi
cd "$frontend"

# 2. A log directory of .vis files built from the samples.
work=$(mktemp -d "${TMPDIR:-/tmp}/graph-ascend-browser.XXXXXX")
logdir="$work/logdir"
tb_pid=""
cleanup() {
  if [ -n "$tb_pid" ] && kill -0 "$tb_pid" 2>/dev/null; then
    kill "$tb_pid" 2>/dev/null || true
    wait "$tb_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

graph() { # graph <sample> <json> <out dir> [flags]
  local sample=$1 json=$2 out=$3
  shift 3
  (cd "$root/samples/$sample" && "$cli" graph -i "$json" -o "$logdir/$out" "$@" >"$work/$out.log" 2>&1) || {
    echo "test-browser: graph-ascend graph -i samples/$sample/$json failed:" >&2
    cat "$work/$out.log" >&2
    exit 1
  }
}
graph cnn_statistics compare.json statistics
graph cnn_statistics build.json build
graph overflow_nan compare.json overflow -oc
graph dist_gloo batch.json batch
# verl's step_<N>/<stage> layout (stages.spec.ts): one run per stage.
graph rl_stages batch.json stages
# The rank overview (docs/OVERVIEW.md): 4 ranks, rank 2 perturbed.
graph rank_origin batch.json origin
graph cnn_md5 compare.json md5
# More than two runs (repeat_runs.spec.ts): three runs of one step, each against run 0, and runs.json.
graph repeat_runs runs.json repeat
# The first-divergence walk (docs/DIVERGENCE.md): the bf16 culprit inside a collapsed layer.
graph gpt_statistics compare.json gpt
# Mapped layer names (-lm): some modules (Megatron's core_attention) still have no counterpart.
graph layer_mapping compare.json layer_mapping -lm layer_mapping.yaml
# Checkpoint similarity on the modules (ckpt.spec.ts): stored by --ckpt (checkpoints written by real
# torch.save), and msprobe 26.2.0's own ckpt_compare JSON beside a plain build.
graph layer_mapping build.json weights --ckpt ../ckpt/tp2pp2_a ../ckpt/tp2pp2_b
graph layer_mapping build.json weights_beside
cp "$root/samples/ckpt/msprobe/tp2pp2.json" "$logdir/weights_beside/ckpt_similarity.json"
# graph_visualize (msprobe 26's flags): both gradings stored, msprobe 26's shown first.
(cd "$root/samples/gpt_statistics" &&
  "$cli" graph_visualize -tp npu/step0/rank0 -gp bench/step0/rank0 -o "$logdir/graded" >"$work/graded.log" 2>&1) || {
  echo "test-browser: graph-ascend graph_visualize on samples/gpt_statistics failed:" >&2
  cat "$work/graded.log" >&2
  exit 1
}
# A .vis.db of real msprobe 26.2.0 (four steps and ranks), opened through the service's conversion cache.
mkdir -p "$logdir/msprobe26"
cp "$root/tests/data/msprobe_outputs/dist_gloo_batch_26.2.0.vis.db" "$logdir/msprobe26/compare_dist_gloo.vis.db"
export XDG_CACHE_HOME="$work/cache"
# msprobe 8.1.2's JSON .vis of a compare, ranked when converted (msprobe_ranking.spec.ts); and msprobe 26.2.0's
# compare with its match links taken out (a copy), which cannot be ranked and says why.
mkdir -p "$logdir/msprobe81" "$logdir/msprobe_unmatched"
cp "$root/tests/data/msprobe_outputs/dist_gloo_compare_8.1.2.vis" "$logdir/msprobe81/compare_dist_gloo.vis"
unmatched="$logdir/msprobe_unmatched/compare_unmatched.vis.db"
cp "$root/tests/data/msprobe_outputs/dist_gloo_compare_26.2.0.vis.db" "$unmatched"
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE tb_nodes SET matched_node_link = ?", ("[]",))
db.commit()' "$unmatched"
# A single compare given by its dump roots (-tp/-gp of one rank folder each): one graph, shown as one
# (issue 29 point 6).
(cd "$root/samples/gpt_statistics" &&
  "$cli" graph_visualize -tp npu/step0 -gp bench/step0 -o "$logdir/single" >"$work/single.log" 2>&1) || {
  echo "test-browser: graph-ascend graph_visualize -tp npu/step0 -gp bench/step0 on samples/gpt_statistics failed:" >&2
  cat "$work/single.log" >&2
  exit 1
}
# Raw dumps for the conversion form (convert.spec.ts): a sample, a 10^5-node scale of it (bench/scale)
# to cancel mid-way, and a dump.json cut short.
mkdir -p "$logdir/dumps/bad"
cp -r "$root/samples/gpt_statistics" "$logdir/dumps/gpt"
python3 "$root/bench/scale/scale_sample.py" --case "$root/samples/gpt_statistics" --nodes 100000 \
  --out "$logdir/dumps/scaled" >/dev/null
cp "$root/samples/gpt_statistics/npu/step0/rank0/"{construct,stack}.json "$logdir/dumps/bad/"
printf '{"task": "statistics", "level": "mix", "dump_data_dir": null,\n "data": {"Torch.add.0.forward": {' \
  > "$logdir/dumps/bad/dump.json"
# Repro scripts (repro.spec.ts): a graph built from a dump inside the log directory, so that the service may read it.
(cd "$logdir/dumps/gpt" && "$cli" graph -i build.json -o "$logdir/repro" >"$work/repro.log" 2>&1) || {
  echo "test-browser: graph-ascend graph on the log directory's copy of samples/gpt_statistics failed:" >&2
  cat "$work/repro.log" >&2
  exit 1
}
# Tensor views (tensor.spec.ts): a task "tensor" compare built from the log directory's copy of samples/gpt_tensor.
cp -r "$root/samples/gpt_tensor" "$logdir/dumps/gpt_tensor"
(cd "$logdir/dumps/gpt_tensor" && "$cli" graph -i compare.json -o "$logdir/tensor" >"$work/tensor.log" 2>&1) || {
  echo "test-browser: graph-ascend graph on the log directory's copy of samples/gpt_tensor failed:" >&2
  cat "$work/tensor.log" >&2
  exit 1
}
# A damaged file: the page must name it in its error and keep working.
mkdir -p "$logdir/broken"
printf 'not a graph-ascend file\n' > "$logdir/broken/compare_20250101000000.vis"

# 3. TensorBoard on a free port.
port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$venv/bin/tensorboard" --logdir "$logdir" --host 127.0.0.1 --port "$port" >"$work/tensorboard.log" 2>&1 &
tb_pid=$!
url="http://127.0.0.1:$port"
for _ in $(seq 120); do
  if curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "$url/data/plugin/graph_ascend/api/Health" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$tb_pid" 2>/dev/null; then
    echo "test-browser: tensorboard exited:" >&2
    tail -20 "$work/tensorboard.log" >&2
    exit 1
  fi
  sleep 0.5
done
if ! curl -sf -X POST -H 'Content-Type: application/json' -d '{}' "$url/data/plugin/graph_ascend/api/Health" >/dev/null; then
  echo "test-browser: the plugin did not answer at $url" >&2
  tail -20 "$work/tensorboard.log" >&2
  exit 1
fi

# 4. Playwright.
rm -rf "$frontend/test-results"
status=0
GA_TB_URL="$url" GA_LOGDIR="$logdir" npx playwright test "$@" || status=$?
summary=$(node -e '
  const r = require(process.argv[1]).stats;
  console.log(`browser: ${r.expected} passed, ${r.unexpected} failed` + (r.skipped ? `, ${r.skipped} skipped` : ""));
' "$frontend/test-results/results.json" 2>/dev/null || true)
[ -n "$summary" ] && echo "$summary"

# 5. A screenshot for the README: written when missing, or refreshed with GA_UPDATE_SCREENSHOT=1
#    (so a test run does not leave the tracked image modified).
shot=$(find "$frontend/test-results" -name 'precision-filter.png' 2>/dev/null | head -1)
if [ "$status" -eq 0 ] && [ -n "$shot" ] && { [ ! -f "$root/docs/screenshot.png" ] || [ "${GA_UPDATE_SCREENSHOT:-0}" = 1 ]; }; then
  mkdir -p "$root/docs"
  cp "$shot" "$root/docs/screenshot.png"
fi
if [ "$status" -ne 0 ]; then
  echo "test-browser: tensorboard log tail:" >&2
  tail -20 "$work/tensorboard.log" >&2
fi
exit "$status"
