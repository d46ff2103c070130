#!/usr/bin/env bash
# Builds every sample config (and extra flag sets) with two graph-ascend binaries and checks that
# the outputs hold the same graph content (bin/ga_same_graphs: same sections, same serialized
# bytes; the zstd frames may differ).
#   bench/builder/same_as_baseline.sh BASELINE_BINARY [BINARY] [CONFIG...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=$1
ours=${2:-$root/build/bin/graph-ascend}
shift $(($# >= 2 ? 2 : 1))
same=$root/build/bin/ga_same_graphs
configs=("$@")
if [ ${#configs[@]} -eq 0 ]; then
  configs=("$root"/samples/*/build.json "$root"/samples/*/compare.json "$root"/samples/*/batch.json)
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
n=0
for cfg in "${configs[@]}"; do
  flagsets=("" "-oc")
  case $cfg in
    */layer_mapping/compare.json) flagsets+=("-lm $(dirname "$cfg")/layer_mapping.yaml") ;;
    */compare.json) flagsets+=("-f") ;;
  esac
  for flags in "${flagsets[@]}"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    "$base" graph -i "$cfg" -o "$out/a$n" $flags >/dev/null 2>"$out/a$n.err" || echo "baseline failed: $cfg $flags"
    # shellcheck disable=SC2086
    "$ours" graph -i "$cfg" -o "$out/b$n" $flags >/dev/null 2>"$out/b$n.err" || echo "ours failed: $cfg $flags"
    if ! "$same" "$out/a$n" "$out/b$n" >/dev/null 2>"$out/diff"; then
      echo "DIFFERENT: $cfg $flags: $(head -c 400 "$out/diff")"
      fail=1
    fi
  done
done
echo "$n runs, $([ $fail = 0 ] && echo "all the same graph content" || echo "some differ")"
exit $fail
