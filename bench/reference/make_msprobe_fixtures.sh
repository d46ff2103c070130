#!/usr/bin/env bash
# Regenerates tests/data/msprobe_outputs/: small graph files written by real msprobe from samples/.
#   msprobe 26.2.0 graph_visualize -> *.vis.db  (26.x schema: tb_stack, stack_id, is_distributed)
#   msprobe 8.3.3  graph -i        -> *.vis.db  (8.3 schema: tb_stack, stack_id, no is_distributed)
#   msprobe 8.2.1  graph -i        -> *.vis.db  (8.2 schema)
#   msprobe 8.1.2  graph -i        -> *.vis     (JSON .vis)
# 8.3.3 and 8.2.1 run from their torch-less "-graph" venvs (run_msprobe.py calls the graph command
# without msprobe's torch check).
# Usage: bench/reference/make_msprobe_fixtures.sh [VERSION ...]   (default: all; creates the venvs on
# first use, see README.md)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="$root/tests/data/msprobe_outputs"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"

# run VERSION SAMPLE/CONFIG.json NAME EXT: runs msprobe, copies its one result file to $dest/NAME.
wanted=("$@")
run() {
  local version="$1" config="$2" name="$3" ext="$4" out="$work/$3"
  if [ "${#wanted[@]}" -gt 0 ] && [[ ! " ${wanted[*]} " == *" $version "* ]]; then return 0; fi
  "$here/run_msprobe.sh" --version "$version" "$root/samples/$config" "$out" >"$work/$name.log" 2>&1 || {
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
