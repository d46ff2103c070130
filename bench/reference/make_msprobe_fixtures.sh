#!/usr/bin/env bash
# Regenerates tests/data/msprobe_outputs/: small graph files written by real msprobe from samples/.
#   msprobe 26.2.0 graph_visualize -> *.vis.db  (26.x schema: tb_stack, stack_id, is_distributed)
#   msprobe 8.3.3  graph -i        -> *.vis.db  (8.3 schema: tb_stack, stack_id, no is_distributed)
#   msprobe 8.2.1  graph -i        -> *.vis.db  (8.2 schema)
#   msprobe 8.1.2  graph -i        -> *.vis     (JSON .vis)
#   msprobe 8.2.0  graph -i        -> *.vis     (JSON .vis: its CLI does not call its db writer yet)
#                  GraphBuilder.to_db          -> *.vis.db  (the early 8.2 schema, stack_info inline;
#                                                 msprobe820_db.py runs 8.2.0's command with it)
#   msprobe 8.1.0, 1.3.0, 1.2.0 graph -i   -> *.vis     (the older JSON .vis layouts)
# Every version but 26.2.0 and 8.1.2 runs from a torch-less "-graph" venv (run_msprobe.py calls the
# graph command without msprobe's torch check). msprobe 1.x reads stack.json in its own layout
# ({name: frames}, what its dumper wrote); it gets a copy of the dump with stack.json rewritten so
# (construct.json and dump.json as they are). p2p_micro stops its dump before the optimizer step:
# msprobe 1.2 refuses the "optimizer" node of msprobe 26's construct.json.
# Usage: bench/reference/make_msprobe_fixtures.sh [VERSION ...]   (default: all; creates the venvs on
# first use, see README.md)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="$root/tests/data/msprobe_outputs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"

# old_stacks SAMPLE/CONFIG.json: a copy of the config's dump folders with stack.json in msprobe 1.x's
# layout ({name: frames}); prints the copy's compare.json.
old_stacks() {
  python3 - "$root/samples/$1" "$work/old-stacks/$(dirname "$1")" <<'PY'
import json, os, shutil, sys
config, dest = sys.argv[1], sys.argv[2]
with open(config) as f:
    c = json.load(f)
base = os.path.dirname(config)
for key in ("npu_path", "bench_path"):
    if not c.get(key):
        continue
    src, dst = os.path.join(base, c[key]), os.path.join(dest, c[key])
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    for folder, _, files in os.walk(dst):
        if "stack.json" in files:
            path = os.path.join(folder, "stack.json")
            with open(path) as f:
                groups = json.load(f)
            flat = {name: frames for names, frames in groups.values() for name in names}
            with open(path, "w") as f:
                json.dump(flat, f, indent=1)
    c[key] = dst
out = os.path.join(dest, os.path.basename(config))
with open(out, "w") as f:
    json.dump(c, f)
print(out)
PY
}

# run VERSION SAMPLE/CONFIG.json NAME EXT: runs msprobe, copies its one result file to $dest/NAME.
wanted=("$@")
run() {
  local version="$1" config="$2" name="$3" ext="$4" out="$work/$3"
  if [ "${#wanted[@]}" -gt 0 ] && [[ ! " ${wanted[*]} " == *" $version "* ]]; then return 0; fi
  local input="$root/samples/$config"
  case $version in 1.*) input=$(old_stacks "$config") ;; esac
  if [ "$version" = 8.2.0-db ]; then
    mkdir -p "$out"
    python3 -c "import sys; sys.path.insert(0, '$here'); import json, run_msprobe; \
      json.dump(run_msprobe.absolute_input('$input'), open('$work/$name.json', 'w'))"
    "$here/run_msprobe.sh" --version 8.2.0-graph --install
    (cd "$work" && "$root/bench/.venv-msprobe-8.2.0-graph/bin/python" "$here/msprobe820_db.py" -i "$work/$name.json" \
      -o "$out") >"$work/$name.log" 2>&1
  else
    "$here/run_msprobe.sh" --version "$version" "$input" "$out" >"$work/$name.log" 2>&1
  fi || {
    cat "$work/$name.log" >&2
    echo "make_msprobe_fixtures: msprobe $version failed on $config" >&2
    exit 1
  }
  local files
  mapfile -t files < <(find "$out" -name "*$ext" -type f | sort)
  if [ "${#files[@]}" -eq 0 ]; then
    echo "make_msprobe_fixtures: msprobe $version wrote no $ext for $config" >&2
    exit 1
  fi
  # 8.1.2 writes one JSON .vis per graph of a batch: keep them all, numbered by their own names.
  if [ "${#files[@]}" -eq 1 ]; then
    cp "${files[0]}" "$dest/$name$ext"
    echo "$dest/$name$ext"
  else
    for f in "${files[@]}"; do
      local base
      base="$(basename "$f" "$ext" | sed -E 's/_[0-9]{14}$//')"
      cp "$f" "$dest/$name-$base$ext"
      echo "$dest/$name-$base$ext"
    done
  fi
}

run 26.2.0 dist_gloo/compare.json dist_gloo_compare_26.2.0 .vis.db
run 26.2.0 dist_gloo/build.json dist_gloo_build_26.2.0 .vis.db
run 26.2.0 dist_gloo/batch.json dist_gloo_batch_26.2.0 .vis.db
run 8.3.3-graph dist_gloo/compare.json dist_gloo_compare_8.3.3 .vis.db
run 8.3.3-graph dist_gloo/build.json dist_gloo_build_8.3.3 .vis.db
run 8.3.3-graph dist_gloo/batch.json dist_gloo_batch_8.3.3 .vis.db
run 8.2.1-graph dist_gloo/compare.json dist_gloo_compare_8.2.1 .vis.db
run 8.2.1-graph dist_gloo/batch.json dist_gloo_batch_8.2.1 .vis.db
run 8.1.2 dist_gloo/compare.json dist_gloo_compare_8.1.2 .vis
run 8.1.2 dist_gloo/build.json dist_gloo_build_8.1.2 .vis
run 8.1.2 dist_gloo/batch.json dist_gloo_batch_8.1.2 .vis
# issue 9: micro steps and isend/irecv links (msprobe 26.2.0), the early 8.2 db, the older JSON layouts.
run 26.2.0-graph p2p_micro/batch.json p2p_micro_batch_26.2.0 .vis.db
run 8.2.0-db p2p_micro/batch.json p2p_micro_batch_8.2.0 .vis.db
run 8.2.0-graph p2p_micro/compare.json p2p_micro_compare_8.2.0 .vis
run 8.1.0-graph p2p_micro/compare.json p2p_micro_compare_8.1.0 .vis
run 1.3.0-graph p2p_micro/compare.json p2p_micro_compare_1.3.0 .vis
run 1.2.0-graph p2p_micro/compare.json p2p_micro_compare_1.2.0 .vis
