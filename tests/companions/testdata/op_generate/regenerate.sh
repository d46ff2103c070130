#!/usr/bin/env bash
# Regenerates msprobe-8.3.3/: what msprobe 8.3.3's op_generate extracts for each case of cases.tsv
# (the golden files of tests/companions/op_generate_test.cc), and msprobe.txt, how its generator ended.
# Needs bench/.venv-msprobe-8.3.3 (bench/reference/run_msprobe.sh --version 8.3.3 --install).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
msprobe="$root/bench/.venv-msprobe-8.3.3/bin/msprobe"
[ -x "$msprobe" ] || { echo "regenerate: $msprobe missing; run bench/reference/run_msprobe.sh --version 8.3.3 --install" >&2; exit 2; }
out="$here/msprobe-8.3.3"
rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$out/msprobe.txt"
grep -v '^#' "$here/cases.tsv" | while IFS=$'\t' read -r case dump api propagation mode _; do
  mkdir -p "$work/$case/scripts"
  cat > "$work/$case/config_op.json" <<JSON
{"dump_json_path": "$root/samples/$dump", "api_name": "$api", "extract_api_path": "$work/$case/$api.json",
 "propagation": "$propagation", "data_mode": "$mode", "random_seed": 1234, "iter_times": 1}
JSON
  # msprobe runs from a scratch folder (it writes logs beside itself); CUDA is hidden as on CI.
  status=0
  (cd "$work/$case" && CUDA_VISIBLE_DEVICES="" "$msprobe" -f pytorch op_generate -i config_op.json -o scripts \
    > log.txt 2>&1) || status=$?
  if [ -f "$work/$case/$api.json" ]; then cp "$work/$case/$api.json" "$out/$case.json"; fi
  last=$(grep -E "ERROR|Error|Generate operator script successfully" "$work/$case/log.txt" | tail -n 1 | sed "s|$work/||g")
  printf '%s\texit=%s\t%s\n' "$case" "$status" "$last" >> "$out/msprobe.txt"
done
cat "$out/msprobe.txt"
