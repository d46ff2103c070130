#!/usr/bin/env bash
# Runs the reference msprobe graph builder on one of our compare.json files and measures it.
#
#   bench/reference/run_msprobe.sh [--version latest|26.2.0|8.3.3|8.1.2] COMPARE_JSON [OUTDIR] [-- MSPROBE_ARGS...]
#   bench/reference/run_msprobe.sh --version 8.1.2 --install      # only create the venv
#
# Versions (each in its own venv bench/.venv-msprobe-<version>, created on first use from
# bench/reference/requirements-<version>.txt pinned by constraints-<version>.txt; needs PyPI, ~6 GB
# each because msprobe -f pytorch needs torch):
#   latest = 26.2.0  `msprobe graph_visualize -tp … -gp … -o OUT`, writes SQLite *.vis.db
#   8.3.3            `msprobe -f pytorch graph -i compare.json -o OUT`, writes SQLite *.vis.db
#   8.1.2            `msprobe -f pytorch graph -i compare.json -o OUT`, writes JSON *.vis
#   <V>-graph        the same graph command without torch (26.2.0, 8.3.3, 8.2.1, 8.2.0, 8.1.2, 8.1.0,
#                    1.3.0, 1.2.0): the older file layouts of make_msprobe_fixtures.sh
# Relative npu_path/bench_path are resolved against the compare.json's directory. OUTDIR
# defaults to bench/out/reference/<case>-<json name>-<version>/ (cleared first); an explicit
# OUTDIR must be empty or absent. MSPROBE_ARGS go to msprobe verbatim (e.g. -oc, -lm FILE;
# fuzzy match is -f on 8.x and -fm on 26.x).
#
# Prints `command=…`, `output=FILE bytes=N` per result file, `log=FILE`, then
#   wall_s=<s> peak_rss_mb=<whole process tree, polled> max_process_rss_mb=<largest process> cpu_s=<s> exit=<code>
# and exits non-zero if msprobe failed or wrote no result.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench=$(dirname "$here")
version=latest
install_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --version) version=$2; shift 2 ;;
    --version=*) version=${1#*=}; shift ;;
    --install) install_only=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ "$version" = latest ] && version=26.2.0
requirements="$here/requirements-$version.txt"
if [ ! -f "$requirements" ]; then
  echo "run_msprobe: unknown version $version (have: $(cd "$here" && ls requirements-*.txt | sed 's/requirements-//;s/.txt//' | tr '\n' ' '))" >&2
  exit 2
fi

venv="$bench/.venv-msprobe-$version"
py=${PYTHON:-python3.11}
command -v "$py" >/dev/null || py=python3
stamp="$venv/.requirements.sha"
constraints="$here/constraints-$version.txt"
want=$(cat "$requirements" "$constraints" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "run_msprobe: installing $requirements into $venv" >&2
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install -q -r "$requirements" -c "$constraints" >&2
  echo "$want" >"$stamp"
fi
[ $install_only = 1 ] && exit 0
if [ $# -lt 1 ]; then
  echo "usage: run_msprobe.sh [--version V] COMPARE_JSON [OUTDIR] [-- MSPROBE_ARGS...]" >&2
  exit 2
fi
exec python3 "$here/run_msprobe.py" --venv "$venv" --version "$version" "$@"
